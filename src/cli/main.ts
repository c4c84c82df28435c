// The `roost` process (bin/roost.js): runs the command named by its
// arguments with the process's environment and streams, and exits with the
// command's exit code (program.ts).
import { runRoost } from './program.js'

runRoost(process.argv.slice(2), { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    process.exitCode = code
  },
  () => {
    process.exitCode = 1
  },
)
