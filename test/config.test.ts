import t from 'tap'
import { ConfigError, DEFAULT_ADMISSION, DEFAULT_EVENT_QUEUE_MAX_BYTES, DEFAULT_EVENT_QUEUE_MAX_EVENTS, DEFAULT_LISTEN_BACKLOG, loadConfig, readConfigAll } from '../src/config.js'

t.test('defaults follow the startup contract', async (t) => {
  const c = loadConfig({})
  t.equal(c.port, 9991)
  t.equal(c.host, '127.0.0.1')
  t.equal(c.databaseUrl, undefined)
  t.equal(c.redisUrl, undefined)
  t.equal(c.redisPrefix, 'roost')
  t.equal(c.dataDir, './data')
  t.equal(c.externalUrl, 'http://localhost:9991')
  t.equal(c.eventQueueTimeoutSeconds, 600)
  t.equal(c.heartbeatIntervalSeconds, 60)
  t.equal(c.eventQueueMaxEvents, DEFAULT_EVENT_QUEUE_MAX_EVENTS)
  t.equal(c.eventQueueMaxBytes, DEFAULT_EVENT_QUEUE_MAX_BYTES)
  t.equal(DEFAULT_EVENT_QUEUE_MAX_BYTES, 16 * 1024 * 1024)
  t.equal(c.maxFileUploadSizeMib, 25)
  t.equal(c.invitationLinkValidityMinutes, 14400)
  t.equal(c.smtpUrl, undefined)
  t.equal(c.s3, undefined)
  t.equal(c.rateLimiting, true)
  t.equal(c.listenBacklog, DEFAULT_LISTEN_BACKLOG)
  t.equal(DEFAULT_LISTEN_BACKLOG, 8192)
  t.equal(c.upstreamNames, true)
})

t.test('EVENT_QUEUE_MAX_BYTES sets the byte cap of a queue, at least 1 MiB', async (t) => {
  t.equal(loadConfig({ EVENT_QUEUE_MAX_BYTES: '1048576' }).eventQueueMaxBytes, 1048576)
  for (const bad of ['1048575', '16MiB', '-1', '4294967296']) {
    t.throws(() => loadConfig({ EVENT_QUEUE_MAX_BYTES: bad }), { name: 'ConfigError', message: /^EVENT_QUEUE_MAX_BYTES must be an integer between 1048576 and 2147483647/ })
  }
})

t.test('ADMISSION_* set the admission limits; 0 turns one off; the heap limit defaults to a share of V8\'s', async (t) => {
  t.same(loadConfig({}).admission, DEFAULT_ADMISSION)
  t.same(DEFAULT_ADMISSION, { maxInFlight: 64, maxEventLoopDelayMs: 1000, maxHeapUsedMib: undefined, retryAfterSeconds: 2, sampleIntervalMs: 500 })
  t.same(
    loadConfig({ ADMISSION_MAX_IN_FLIGHT: '0', ADMISSION_MAX_EVENT_LOOP_DELAY_MS: '250', ADMISSION_MAX_HEAP_USED_MIB: '1536', ADMISSION_RETRY_AFTER_SECONDS: '5' }).admission,
    { maxInFlight: 0, maxEventLoopDelayMs: 250, maxHeapUsedMib: 1536, retryAfterSeconds: 5, sampleIntervalMs: 500 },
  )
  t.equal(loadConfig({ ADMISSION_MAX_HEAP_USED_MIB: '0' }).admission.maxHeapUsedMib, 0)
  t.throws(() => loadConfig({ ADMISSION_MAX_IN_FLIGHT: 'many' }), { name: 'ConfigError', message: /^ADMISSION_MAX_IN_FLIGHT must be an integer between 0 and 1000000, got 'many'/ })
  t.throws(() => loadConfig({ ADMISSION_RETRY_AFTER_SECONDS: '0' }), { name: 'ConfigError', message: /^ADMISSION_RETRY_AFTER_SECONDS must be an integer between 1 and 3600/ })
  t.throws(() => loadConfig({ ADMISSION_MAX_EVENT_LOOP_DELAY_MS: '-5' }), { name: 'ConfigError', message: /^ADMISSION_MAX_EVENT_LOOP_DELAY_MS must be an integer/ })
})

t.test('LISTEN_BACKLOG sets the listen backlog', async (t) => {
  t.equal(loadConfig({ LISTEN_BACKLOG: '511' }).listenBacklog, 511)
})

t.test('UPSTREAM_NAMES=off keeps to the spec\'s names', async (t) => {
  t.equal(loadConfig({ UPSTREAM_NAMES: 'off' }).upstreamNames, false)
  t.equal(loadConfig({ UPSTREAM_NAMES: 'on' }).upstreamNames, true)
})

t.test('EXTERNAL_URL follows PORT unless given', async (t) => {
  t.equal(loadConfig({ PORT: '8080' }).externalUrl, 'http://localhost:8080')
  t.equal(loadConfig({ EXTERNAL_URL: 'https://chat.example.com/' }).externalUrl, 'https://chat.example.com')
})

const BAD: [Record<string, string>, RegExp][] = [
  [{ PORT: 'eighty' }, /^PORT must be an integer between 0 and 65535/],
  [{ CORS_ORIGINS: 'chat.example.com' }, /^CORS_ORIGINS must be a comma-separated list of origins/],
  [{ CORS_ORIGINS: 'https://a.example.com,https://b.example.com/path' }, /^CORS_ORIGINS .*got 'https:\/\/b.example.com\/path'/],
  [{ TRUSTED_PROXIES: '10.0.0.0/33' }, /^TRUSTED_PROXIES must be a comma-separated list of IP addresses or CIDR ranges, got '10.0.0.0\/33'/],
  [{ TRUSTED_PROXIES: 'proxy.internal' }, /^TRUSTED_PROXIES must be/],
  [{ LOG_LEVEL: 'verbose' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
  [{ PORT: '70000' }, /^PORT must be an integer/],
  [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL must use one of postgresql:, postgres:/],
  [{ DATABASE_URL: 'not a url' }, /^DATABASE_URL must be a URL/],
  [{ REDIS_URL: 'http://x' }, /^REDIS_URL must use one of redis:, rediss:/],
  [{ EXTERNAL_URL: 'ftp://x' }, /^EXTERNAL_URL must use/],
  [{ EVENT_QUEUE_TIMEOUT_SECONDS: '0' }, /^EVENT_QUEUE_TIMEOUT_SECONDS must be an integer/],
  [{ HEARTBEAT_INTERVAL_SECONDS: '-5' }, /^HEARTBEAT_INTERVAL_SECONDS must be an integer/],
  [{ EVENT_QUEUE_MAX_EVENTS: '1e3' }, /^EVENT_QUEUE_MAX_EVENTS must be an integer/],
  [{ MAX_FILE_UPLOAD_SIZE: 'big' }, /^MAX_FILE_UPLOAD_SIZE must be an integer/],
  [{ INVITATION_LINK_VALIDITY_MINUTES: '1.5' }, /^INVITATION_LINK_VALIDITY_MINUTES must be an integer/],
  [{ SMTP_URL: 'mailto:x' }, /^SMTP_URL must use one of smtp:, smtps:/],
  [{ VAPID_PRIVATE_KEY: 'A'.repeat(43), VAPID_SUBJECT: 'mailto:a@b.c' }, /^VAPID_PUBLIC_KEY must be set/],
  [{ VAPID_PUBLIC_KEY: 'BAAA', VAPID_PRIVATE_KEY: 'A'.repeat(43), VAPID_SUBJECT: 'mailto:a@b.c' }, /^VAPID_PUBLIC_KEY must be a base64url-encoded uncompressed P-256 public key/],
  [{ VAPID_PUBLIC_KEY: `B${'A'.repeat(86)}`, VAPID_PRIVATE_KEY: 'short', VAPID_SUBJECT: 'mailto:a@b.c' }, /^VAPID_PRIVATE_KEY must be a base64url-encoded P-256 private key/],
  [{ VAPID_PUBLIC_KEY: `B${'A'.repeat(86)}`, VAPID_PRIVATE_KEY: 'A'.repeat(43), VAPID_SUBJECT: 'admin@example.com' }, /^VAPID_SUBJECT must be a mailto: or https: URL/],
  [{ S3_BUCKET: 'b' }, /S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY must be set/],
  [{ REDIS_PREFIX: 'two words' }, /^REDIS_PREFIX must be 1–64 letters/],
  [{ RATE_LIMITING: 'sometimes' }, /^RATE_LIMITING must be 'on' or 'off'/],
  [{ LISTEN_BACKLOG: '0' }, /^LISTEN_BACKLOG must be an integer between 1 and 1000000, got '0'/],
  [{ LISTEN_BACKLOG: 'lots' }, /^LISTEN_BACKLOG must be an integer/],
  [{ UPSTREAM_NAMES: 'both' }, /^UPSTREAM_NAMES must be 'on' or 'off', got 'both'/],
  [{ BOOTSTRAP_OWNER_EMAIL: 'nobody' }, /^BOOTSTRAP_OWNER_EMAIL must be an email address/],
  [{ BOOTSTRAP_OWNER_EMAIL: 'a@b.c' }, /^BOOTSTRAP_OWNER_PASSWORD must be set/],
  [{ REDIS_CLUSTER_NODES: 'redis-0:7000,redis-1' }, /^REDIS_CLUSTER_NODES must be a comma-separated list of host:port, got 'redis-1'/],
  [{ REDIS_CLUSTER_NODES: 'redis-0:70000' }, /^REDIS_CLUSTER_NODES must be a comma-separated list of host:port, got 'redis-0:70000'/],
  [{ REDIS_CLUSTER_NODES: 'redis://redis-0:7000' }, /^REDIS_CLUSTER_NODES must be a comma-separated list of host:port/],
  [{ REDIS_URL: 'redis://r:6379', REDIS_CLUSTER_NODES: 'r:7000' }, /^REDIS_URL and REDIS_CLUSTER_NODES are alternatives: set only one/],
  [{ REDIS_CLUSTER_NODES: 'r:7000', REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm' }, /^REDIS_CLUSTER_NODES and REDIS_SENTINELS are alternatives/],
  [{ REDIS_SENTINELS: 's1:26379,s2:26379' }, /^REDIS_SENTINEL_MASTER must be set with REDIS_SENTINELS/],
  [{ REDIS_SENTINEL_MASTER: 'mymaster' }, /^REDIS_SENTINELS must be set with REDIS_SENTINEL_MASTER/],
  [{ REDIS_SENTINELS: 's1:port', REDIS_SENTINEL_MASTER: 'mymaster' }, /^REDIS_SENTINELS must be a comma-separated list of host:port, got 's1:port'/],
  [{ REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER: 'my master' }, /^REDIS_SENTINEL_MASTER must be a master name/],
  [{ REDIS_URL: 'redis://r:6379', REDIS_PASSWORD: 'x' }, /^REDIS_PASSWORD applies to REDIS_CLUSTER_NODES and REDIS_SENTINELS; with REDIS_URL put the credentials in the URL/],
  [{ REDIS_PASSWORD: 'x' }, /^REDIS_PASSWORD is set but no Redis is/],
  [{ REDIS_CLUSTER_NODES: 'r:7000', REDIS_SENTINEL_PASSWORD: 'x' }, /^REDIS_SENTINEL_PASSWORD applies only with REDIS_SENTINELS/],
  [{ REDIS_CLUSTER_NODES: 'r:7000', REDIS_USERNAME: 'roost' }, /^REDIS_USERNAME needs REDIS_PASSWORD/],
  [{ REDIS_CLUSTER_NODES: 'r:7000', REDIS_TLS: 'maybe' }, /^REDIS_TLS must be 'on' or 'off'/],
  [{ REDIS_CLUSTER_NODES: 'r:7000', REDIS_TLS_CA_FILE: '/etc/hostname' }, /^REDIS_TLS_CA_FILE needs REDIS_TLS=on/],
  [{ REDIS_CLUSTER_NODES: 'r:7000', REDIS_TLS: 'on', REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' }, /^REDIS_TLS_CA_FILE: cannot read '\/nonexistent\/ca\.pem'/],
  [{ REDIS_CLUSTER_NODES: 'r:7000', REDIS_TLS: 'on', REDIS_TLS_CA_FILE: '/etc/hostname' }, /^REDIS_TLS_CA_FILE: '\/etc\/hostname' is not a PEM certificate/],
]

for (const [env, message] of BAD) {
  t.test(`rejects ${JSON.stringify(env)} naming the variable`, async (t) => {
    let caught: unknown
    try {
      loadConfig(env)
    } catch (error) {
      caught = error
    }
    t.ok(caught instanceof ConfigError, 'a ConfigError')
    t.match((caught as Error).message, message)
  })
}

t.test('accepts on/off spellings for RATE_LIMITING', async (t) => {
  t.equal(loadConfig({ RATE_LIMITING: 'off' }).rateLimiting, false)
  t.equal(loadConfig({ RATE_LIMITING: 'ON' }).rateLimiting, true)
})

t.test('CORS_ORIGINS, TRUSTED_PROXIES, LOG_LEVEL, METRICS_TOKEN', async (t) => {
  const defaults = loadConfig({})
  t.same([defaults.corsOrigins, defaults.trustedProxies, defaults.logLevel, defaults.metricsToken], [[], [], 'info', undefined])
  const set = loadConfig({ CORS_ORIGINS: 'https://chat.example.com, http://localhost:3000/', TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.5,::1, fd00::/8', LOG_LEVEL: 'DEBUG', METRICS_TOKEN: 's3cret' })
  t.same(set.corsOrigins, ['https://chat.example.com', 'http://localhost:3000'])
  t.same(set.trustedProxies, ['10.0.0.0/8', '192.168.1.5', '::1', 'fd00::/8'])
  t.equal(set.logLevel, 'debug')
  t.equal(set.metricsToken, 's3cret')
})

t.test('REDIS_CLUSTER_NODES and REDIS_SENTINELS are read as lists of host:port', async (t) => {
  const none = loadConfig({})
  t.same([none.redisUrl, none.redisClusterNodes, none.redisSentinel], [undefined, undefined, undefined])
  const cluster = loadConfig({ REDIS_CLUSTER_NODES: 'redis-0.redis:7000, 10.0.0.2:7001,[fd00::3]:7002' })
  t.same(cluster.redisClusterNodes, [
    { host: 'redis-0.redis', port: 7000 },
    { host: '10.0.0.2', port: 7001 },
    { host: 'fd00::3', port: 7002 },
  ])
  t.equal(cluster.redisUrl, undefined)
  const sentinel = loadConfig({ REDIS_SENTINELS: 's1:26379,s2:26380', REDIS_SENTINEL_MASTER: 'roost-master' })
  t.same(sentinel.redisSentinel, { sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26380 }], masterName: 'roost-master' })
  t.equal(sentinel.redisClusterNodes, undefined)
  t.same(sentinel.redisAuth, {})
})

t.test('REDIS_USERNAME, REDIS_PASSWORD, REDIS_SENTINEL_PASSWORD and REDIS_TLS are read for Cluster and Sentinel', async (t) => {
  const cluster = loadConfig({ REDIS_CLUSTER_NODES: 'r:7000', REDIS_USERNAME: 'roost', REDIS_PASSWORD: 'p', REDIS_TLS: 'on' })
  t.same(cluster.redisAuth, { username: 'roost', password: 'p', tls: {} })
  const sentinel = loadConfig({ REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm', REDIS_PASSWORD: 'p', REDIS_SENTINEL_PASSWORD: 's' })
  t.same(sentinel.redisAuth, { password: 'p', sentinelPassword: 's' })
})

t.test('every wrong variable is reported at once, in one error', async (t) => {
  let caught: unknown
  try {
    loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', REDIS_PREFIX: 'has space', RATE_LIMITING: 'maybe' })
  } catch (error) {
    caught = error
  }
  t.ok(caught instanceof ConfigError)
  const error = caught as ConfigError
  t.same(error.problems, [
    "PORT must be an integer between 0 and 65535, got 'eighty'",
    "REDIS_PREFIX must be 1–64 letters, digits, '_', '.', ':' or '-', got 'has space'",
    "RATE_LIMITING must be 'on' or 'off', got 'maybe'",
    "LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got 'loud'",
  ])
  t.equal(error.message, `4 problems:\n${error.problems.map((p) => `  - ${p}`).join('\n')}`)
})

t.test('within one part too, every problem is reported: the VAPID keys, the push bouncer', async (t) => {
  t.throws(() => loadConfig({ VAPID_PUBLIC_KEY: 'BAAA', VAPID_PRIVATE_KEY: 'short', VAPID_SUBJECT: 'admin@example.com' }), {
    name: 'ConfigError',
    problems: [
      'VAPID_PUBLIC_KEY must be a base64url-encoded uncompressed P-256 public key (65 bytes)',
      'VAPID_PRIVATE_KEY must be a base64url-encoded P-256 private key (32 bytes)',
      "VAPID_SUBJECT must be a mailto: or https: URL, got 'admin@example.com'",
    ],
  })
  t.throws(() => loadConfig({ PUSH_BOUNCER_ORG_ID: 'nope' }), {
    name: 'ConfigError',
    problems: [
      'PUSH_BOUNCER_URL must be set with PUSH_BOUNCER_ORG_ID and PUSH_BOUNCER_ORG_KEY',
      "PUSH_BOUNCER_ORG_ID must be the server's registration UUID at the bouncer, got 'nope'",
      "PUSH_BOUNCER_ORG_KEY must be the server's API key at the bouncer (at least 16 printable characters, no spaces)",
    ],
  })
})

t.test('readConfigAll returns the problems beside a configuration that reads each wrong variable as unset', async (t) => {
  const { config, problems } = readConfigAll({ PORT: 'eighty', DATABASE_URL: 'mysql://x', REDIS_URL: 'redis://r:6379' })
  t.same(problems, ["PORT must be an integer between 0 and 65535, got 'eighty'", "DATABASE_URL must use one of postgresql:, postgres:, got 'mysql:'"])
  t.equal(config.port, 9991)
  t.equal(config.databaseUrl, undefined)
  t.equal(config.redisUrl, 'redis://r:6379', 'the rest is read')
  t.same(readConfigAll({}).problems, [])
})

t.test('a single wrong variable is the whole message', async (t) => {
  t.throws(() => loadConfig({ PORT: '70000' }), { name: 'ConfigError', message: "PORT must be an integer between 0 and 65535, got '70000'", problems: ["PORT must be an integer between 0 and 65535, got '70000'"] })
})
