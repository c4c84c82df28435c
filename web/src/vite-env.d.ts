// Vite's asset URL imports (`…?url`), as the bundler resolves them.
declare module '*?url' {
  const url: string
  export default url
}
