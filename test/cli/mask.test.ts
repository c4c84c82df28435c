// maskSecrets: every secret-looking field and URL password, whatever the configuration holds.
import t from 'tap'
import { maskSecrets } from '../../src/cli/mask.js'

t.test('masks fields named like secrets and URL passwords, keeps the rest', async (t) => {
  t.same(
    maskSecrets({
      port: 9991,
      databaseUrl: 'postgresql://u:p@h/db',
      redisUrl: 'redis://h:6379',
      metricsToken: 'tok',
      unsetToken: undefined,
      smtp: { url: 'smtp://a:b@mail', password: 'pw' },
      s3: { accessKeyId: 'id', secretAccessKey: 'sk' },
      origins: ['https://a.example', 'https://u:pw@b.example'],
      webPush: { publicKey: 'BPub', privateKey: 'priv', subject: 'mailto:a@example.com' },
      apns: { key: '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n', keyId: 'K1', teamId: 'T1' },
      pushBouncer: { url: 'https://push.example.com', orgId: 'uuid', orgKey: 'org-secret-key' },
      redisAuth: { password: 'pw', tls: { ca: '-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n' } },
      note: '-----BEGIN RSA PRIVATE KEY-----\nabc',
    }),
    {
      port: 9991,
      databaseUrl: 'postgresql://u:***@h/db',
      redisUrl: 'redis://h:6379',
      metricsToken: '***',
      unsetToken: null,
      smtp: { url: 'smtp://a:***@mail', password: '***' },
      s3: { accessKeyId: 'id', secretAccessKey: '***' },
      origins: ['https://a.example', 'https://u:***@b.example/'],
      webPush: { publicKey: 'BPub', privateKey: '***', subject: 'mailto:a@example.com' },
      apns: { key: '***', keyId: 'K1', teamId: 'T1' },
      pushBouncer: { url: 'https://push.example.com', orgId: 'uuid', orgKey: '***' },
      redisAuth: { password: '***', tls: { ca: '-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n' } },
      note: '***',
    },
  )
})
