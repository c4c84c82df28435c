// The documented configuration: every environment variable loadConfig
// (src/config.ts) reads, its default and its meaning. docs/configuration.md's
// table is generated from this list (`npm run docs:config`), and
// test/docs/configuration.test.ts fails when a variable loadConfig reads is
// missing here or the table is out of date.

export interface ConfigVariable {
  name: string
  /** What applies when the variable is unset (Markdown). */
  default: string
  /** What it sets and what it accepts (Markdown). */
  meaning: string
}

export const CONFIG_VARIABLES: readonly ConfigVariable[] = [
  { name: 'PORT', default: '`9991`', meaning: 'TCP port to listen on (0–65535)' },
  { name: 'HOST', default: '`127.0.0.1`', meaning: 'address to listen on (the container image sets `0.0.0.0`)' },
  { name: 'EXTERNAL_URL', default: '`http://localhost:$PORT`', meaning: 'the organization URL the API reports (`http:` or `https:`); subdomains of its host select other organizations' },
  { name: 'DATA_DIR', default: '`./data`', meaning: 'embedded database (`db/`), local uploads (`uploads/`) and the development mail outbox (`outbox/`)' },
  { name: 'DATABASE_URL', default: 'unset → PGlite in `DATA_DIR/db`', meaning: '`postgresql://…` (or `postgres://…`) of the PostgreSQL database' },
  { name: 'REDIS_URL', default: 'unset → in-process bus (one node only)', meaning: '`redis://…` or `rediss://…` (TLS) of one Redis server, credentials in the URL; alternative to `REDIS_CLUSTER_NODES` and `REDIS_SENTINELS`' },
  { name: 'REDIS_CLUSTER_NODES', default: 'unset', meaning: '`host:port,…` of some nodes of a Redis Cluster (the others are discovered)' },
  { name: 'REDIS_SENTINELS', default: 'unset', meaning: '`host:port,…` of the Redis Sentinels; needs `REDIS_SENTINEL_MASTER`' },
  { name: 'REDIS_SENTINEL_MASTER', default: 'unset', meaning: 'name of the master the Sentinels watch; needs `REDIS_SENTINELS`' },
  { name: 'REDIS_USERNAME', default: 'unset', meaning: 'ACL user of the Cluster or Sentinel-managed servers; needs `REDIS_PASSWORD`' },
  { name: 'REDIS_PASSWORD', default: 'unset', meaning: 'password (`requirepass` or the ACL user\'s) of the Cluster or Sentinel-managed servers' },
  { name: 'REDIS_SENTINEL_PASSWORD', default: 'unset', meaning: 'the Sentinels\' own `requirepass`; only with `REDIS_SENTINELS`' },
  { name: 'REDIS_TLS', default: '`off`', meaning: '`on`: TLS to every Cluster node, or to the Sentinels and the servers they name' },
  { name: 'REDIS_TLS_CA_FILE', default: 'unset → the system\'s CAs', meaning: 'PEM file of the CA that signed the Redis servers\' certificates; needs `REDIS_TLS=on`' },
  { name: 'REDIS_PREFIX', default: '`roost`', meaning: 'prefix of every Redis key and channel (1–64 letters, digits, `_.:-`); deployments sharing one Redis need different ones' },
  { name: 'BOOTSTRAP_REALM_NAME', default: 'unset', meaning: 'name of the organization created at startup when the database has none' },
  { name: 'BOOTSTRAP_OWNER_EMAIL', default: 'unset', meaning: 'its owner\'s email; with none given in embedded mode, a demo organization is created and its owner\'s credentials printed once' },
  { name: 'BOOTSTRAP_OWNER_PASSWORD', default: 'unset', meaning: 'its owner\'s password; set with `BOOTSTRAP_OWNER_EMAIL`' },
  { name: 'EVENT_QUEUE_TIMEOUT_SECONDS', default: '`600`', meaning: 'an event queue not polled for this long is garbage-collected' },
  { name: 'HEARTBEAT_INTERVAL_SECONDS', default: '`60`', meaning: 'an idle long-poll is answered with a `heartbeat` event after this long; proxy read timeouts must exceed it' },
  { name: 'EVENT_QUEUE_MAX_EVENTS', default: '`10000`', meaning: 'unacknowledged events a queue may hold; past it the queue is dropped (`BAD_EVENT_QUEUE_ID`)' },
  { name: 'EVENT_QUEUE_MAX_BYTES', default: '`16777216` (16 MiB)', meaning: 'unacknowledged bytes of event JSON a queue may hold (1 MiB to 2,147,483,647); past it the queue is dropped (`BAD_EVENT_QUEUE_ID`); see [limits.md](limits.md#event-queues)' },
  { name: 'EVENT_QUEUES_PER_USER', default: '`50`', meaning: 'live event queues per user (1–10,000); registering another drops the user\'s oldest queue' },
  { name: 'MAX_FILE_UPLOAD_SIZE', default: '`25`', meaning: 'upload limit in MiB' },
  { name: 'INVITATION_LINK_VALIDITY_MINUTES', default: '`14400`', meaning: 'default invitation expiry (10 days)' },
  { name: 'SESSION_IDLE_TIMEOUT_SECONDS', default: '`1209600` (14 days)', meaning: 'a browser session with no request for this long has ended (60 s to 10 years, at most `SESSION_MAX_AGE_SECONDS`); see [web-sessions.md](web-sessions.md)' },
  { name: 'SESSION_MAX_AGE_SECONDS', default: '`2592000` (30 days)', meaning: 'a browser session ends this long after its login, however active; also the cookies\' `Max-Age`' },
  { name: 'SMTP_URL', default: 'unset → mails written to `DATA_DIR/outbox`', meaning: 'outgoing mail server: `smtp://[user:password@]host[:port]` (STARTTLS when offered) or `smtps://…` (implicit TLS); see [notifications.md](notifications.md)' },
  { name: 'VAPID_PUBLIC_KEY', default: 'unset → no Web Push', meaning: 'Web Push: the VAPID public key as `npx web-push generate-vapid-keys` prints it (base64url, 65-byte uncompressed P-256); all three `VAPID_*` or none' },
  { name: 'VAPID_PRIVATE_KEY', default: 'unset', meaning: 'the VAPID private key (base64url, 32 bytes)' },
  { name: 'VAPID_SUBJECT', default: 'unset', meaning: 'a `mailto:` or `https:` contact for push services' },
  { name: 'FCM_SERVICE_ACCOUNT_FILE', default: 'unset → no FCM', meaning: 'FCM HTTP v1 to Android tokens: path of the Firebase service-account JSON key (checked at startup)' },
  { name: 'FCM_ENDPOINT', default: '`https://fcm.googleapis.com`', meaning: 'base URL of the FCM API; needs `FCM_SERVICE_ACCOUNT_FILE`' },
  { name: 'APNS_KEY_FILE', default: 'unset → no APNs', meaning: 'APNs token authentication to iOS tokens: the `.p8` signing key (P-256, PEM); with `APNS_KEY_ID` and `APNS_TEAM_ID`' },
  { name: 'APNS_KEY_ID', default: 'unset', meaning: 'the key\'s 10-character ID' },
  { name: 'APNS_TEAM_ID', default: 'unset', meaning: 'the 10-character team ID' },
  { name: 'APNS_TOPIC', default: 'unset', meaning: 'bundle ID for devices registered without an `appid`' },
  { name: 'APNS_ENDPOINT', default: '`https://api.push.apple.com`', meaning: 'APNs server (`https://api.sandbox.push.apple.com` for development builds)' },
  { name: 'PUSH_BOUNCER_URL', default: 'unset → no bouncer', meaning: 'base URL (`https:`, or `http:` for a local one) of an upstream-compatible push notification bouncer; all three `PUSH_BOUNCER_*` or none, and not with the FCM or APNs variables' },
  { name: 'PUSH_BOUNCER_ORG_ID', default: 'unset', meaning: 'this server\'s registration UUID at the bouncer (upstream\'s `zulip_org_id`)' },
  { name: 'PUSH_BOUNCER_ORG_KEY', default: 'unset', meaning: 'this server\'s key at the bouncer (upstream\'s `zulip_org_key`, at least 16 printable characters)' },
  { name: 'S3_ENDPOINT', default: 'unset → uploads under `DATA_DIR/uploads`', meaning: 'S3-compatible storage for uploads (`http:` or `https:`); all five `S3_*` together; needed with more than one node' },
  { name: 'S3_BUCKET', default: 'unset', meaning: 'the bucket' },
  { name: 'S3_REGION', default: 'unset', meaning: 'the bucket\'s region' },
  { name: 'S3_ACCESS_KEY_ID', default: 'unset', meaning: 'access key ID' },
  { name: 'S3_SECRET_ACCESS_KEY', default: 'unset', meaning: 'secret access key' },
  { name: 'RATE_LIMITING', default: '`on`', meaning: 'per-user and per-login limits, counted in Redis (in process when embedded); `off` only for load tests' },
  { name: 'UPSTREAM_NAMES', default: '`on`', meaning: 'also answer to upstream\'s names of renamed fields and parameters (`zulip_version`, `zulip_feature_level`, `client_gravatar`, `zulip_extra_emoji`…); `off`: the renamed names only' },
  { name: 'METRICS_TOKEN', default: 'unset → no `/metrics` (404)', meaning: 'Prometheus `/metrics`, served only with `Authorization: Bearer <METRICS_TOKEN>`' },
  { name: 'LOG_LEVEL', default: '`info`', meaning: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`; JSON lines on stdout' },
  { name: 'CORS_ORIGINS', default: 'unset → CORS off', meaning: 'comma-separated origins (`https://chat.example.com`) whose browser clients may call the API' },
  { name: 'TRUSTED_PROXIES', default: 'unset → none', meaning: 'comma-separated addresses or CIDR ranges of proxies whose `X-Forwarded-For` is believed (rate limits and logs then see the client\'s address)' },
  { name: 'OUTBOUND_ALLOW', default: 'unset → none', meaning: 'comma-separated destinations outbound requests (push services, the push bouncer) may reach although they are private, loopback or on a non-default port: `host`, `host:port`, `[ipv6]:port` or a CIDR range; see [outbound-requests.md](outbound-requests.md)' },
  { name: 'ADMISSION_MAX_IN_FLIGHT', default: '`64`', meaning: 'requests a node serves at once (held `GET /events` long-polls and the health and metrics endpoints not counted); past it new requests are refused at once with 503 and `Retry-After`; `0`: no limit; see [operations.md](operations.md#overload)' },
  { name: 'ADMISSION_MAX_EVENT_LOOP_DELAY_MS', default: '`1000`', meaning: 'mean event-loop delay (sampled every 0.5 s) past which new requests are refused with 503; `0`: no limit' },
  { name: 'ADMISSION_MAX_HEAP_USED_MIB', default: '90 % of V8\'s heap limit', meaning: 'V8 heap in use past which new requests are refused with 503; `0`: no limit' },
  { name: 'ADMISSION_RETRY_AFTER_SECONDS', default: '`2`', meaning: 'the `Retry-After` of those refusals (1–3,600)' },
  { name: 'ROOST_COMMIT', default: 'unset → `unknown`', meaning: 'the git commit the build was made from (7–40 hexadecimal digits; the image sets it from its `ROOST_COMMIT` build argument); the `commit` label of `roost_build_info`' },
  { name: 'LISTEN_BACKLOG', default: '`8192`', meaning: 'pending-connection queue of the listening socket, for reconnect storms; the kernel caps it at `net.core.somaxconn`' },
]

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ')

/** The Markdown table of docs/configuration.md. */
export function configurationTable(variables: readonly ConfigVariable[] = CONFIG_VARIABLES): string {
  const rows = variables.map((v) => `| \`${v.name}\` | ${cell(v.default)} | ${cell(v.meaning)} |`)
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n')
}

export const TABLE_START = '<!-- generated by npm run docs:config from src/config-variables.ts: do not edit by hand -->'
export const TABLE_END = '<!-- end of generated table -->'

/** `doc` with the text between the markers replaced by the current table; throws when a marker is missing. */
export function withConfigurationTable(doc: string, table: string = configurationTable()): string {
  const start = doc.indexOf(TABLE_START)
  const end = doc.indexOf(TABLE_END)
  if (start < 0 || end < start) throw new Error('docs/configuration.md lacks the generated-table markers')
  return `${doc.slice(0, start + TABLE_START.length)}\n${table}\n${doc.slice(end)}`
}
