// color_scheme: 1 automatic, 2 dark, 3 light (the API's values).
export function applyTheme(scheme: unknown): void {
  const theme = scheme === 2 ? 'dark' : scheme === 3 ? 'light' : 'auto'
  document.documentElement.dataset.theme = theme
}
