// The Node.js options a Roost server process is started with: `npm start`
// (package.json) and the image's CMD (Dockerfile) carry them, and
// test/node-options.test.ts checks that both still do. The benchmarks start
// their server processes with them too (bench/support.ts).
//
// --max-semi-space-size=32: V8's young generation may grow to 32 MB per
// semi-space instead of 16. GET /messages allocates some hundred kilobytes
// per request (50 rows, their dicts, the reply): the garbage collector took
// 12 % of the node's CPU profile on that request with 16 MB, and 3 % with
// 32 MB or 64 MB (bench/README.md, issue 16). Likely, though not traced,
// scavenges came often enough that objects of requests still in flight were
// promoted to the old generation and collected there later. It costs at most
// 32 MB more memory per process (the new space's two halves), well within
// the chart's limit.
export const SERVER_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=32']
