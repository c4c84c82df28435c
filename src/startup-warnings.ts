// Settings that start but are likely to lose data or misbehave: logged at
// warn when the server starts (server.ts), so an operator sees them in the
// first lines of a pod's log.
import type { Config } from './config.js'

/** Each warning's message; empty when the configuration is sound. */
export function startupWarnings(config: Config): string[] {
  const warnings: string[] = []
  const cluster = Boolean(config.redisUrl || config.redisClusterNodes || config.redisSentinel)
  if (cluster && !config.s3) {
    warnings.push(
      `uploads are stored on this node's disk (${config.dataDir}/uploads) although Redis makes it one node of a cluster: ` +
        'a file uploaded through one node is missing on the others unless that directory is a volume every node shares; set S3_* for shared storage',
    )
  }
  return warnings
}
