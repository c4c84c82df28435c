// The Helm chart (helm/roost): `helm lint` and `helm template` with the
// packaged helm binary, the rendered manifests checked field by field and
// validated against the Kubernetes API schemas (kubernetes-models), and
// missing required settings refused with a clear message.
import t, { type Test } from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
import { Deployment } from 'kubernetes-models/apps/v1'
import { Job } from 'kubernetes-models/batch/v1'
import { Secret, Service } from 'kubernetes-models/v1'
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1'
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1'
import { helmBinary } from './helm-binary.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const chart = path.join(root, 'helm/roost')
const fixtures = path.join(root, 'test/helm')
const REQUIRED = ['--set', 'secret.DATABASE_URL=postgresql://roost:pw@db:5432/roost', '--set', 'secret.REDIS_URL=redis://redis:6379']

// Manifest shapes read loosely; each one has been validated against its schema first.
type Manifest = Record<string, any>

const helm = helmBinary()
const helmHome = (kind: string) => path.join(os.tmpdir(), 'roost-helm-home', kind)
if ('unavailable' in helm) {
  t.plan(0, `helm: ${helm.unavailable}`)
} else {
  const run = (args: string[]) => {
    const result = spawnSync(helm.path, args, { encoding: 'utf8', env: { ...process.env, HELM_CACHE_HOME: helmHome('cache'), HELM_CONFIG_HOME: helmHome('config'), HELM_DATA_HOME: helmHome('data') } })
    if (result.error) throw result.error
    return { status: result.status, stdout: result.stdout, stderr: result.stderr }
  }

  const models: Record<string, (data: Manifest) => { validate(): void }> = {
    'apps/v1/Deployment': (d) => new Deployment(d as never),
    'batch/v1/Job': (d) => new Job(d as never),
    'v1/Secret': (d) => new Secret(d as never),
    'v1/Service': (d) => new Service(d as never),
    'networking.k8s.io/v1/Ingress': (d) => new Ingress(d as never),
    'autoscaling/v2/HorizontalPodAutoscaler': (d) => new HorizontalPodAutoscaler(d as never),
    'policy/v1/PodDisruptionBudget': (d) => new PodDisruptionBudget(d as never),
    'monitoring.coreos.com/v1/ServiceMonitor': (d) => new ServiceMonitor(d as never),
  }

  /** Every rendered document, validated against the schema of its kind, by kind. */
  const render = (tt: Test, args: string[]): Record<string, Manifest> => {
    const result = run(['template', 'roost', chart, '--namespace', 'chat', ...args])
    tt.equal(result.status, 0, `helm template succeeds: ${result.stderr}`)
    const byKind: Record<string, Manifest> = {}
    for (const doc of parseAllDocuments(result.stdout)) {
      const manifest = doc.toJS() as Manifest | null
      if (!manifest) continue
      const key = `${manifest.apiVersion}/${manifest.kind}`
      const model = models[key]
      tt.ok(model, `${key} has a schema`)
      if (!model) continue
      tt.doesNotThrow(() => model(manifest).validate(), `${key} ${manifest.metadata?.name} matches the Kubernetes schema`)
      tt.notOk(byKind[manifest.kind], `one ${manifest.kind}`)
      byKind[manifest.kind] = manifest
    }
    return byKind
  }

  const envOf = (container: Manifest) => Object.fromEntries((container.env as Manifest[]).map((e) => [e.name, e.value ?? e.valueFrom]))

  t.test('helm lint passes with the required values and with the production values', async (t) => {
    const plain = run(['lint', '--strict', chart, ...REQUIRED])
    t.equal(plain.status, 0, `${plain.stdout}${plain.stderr}`)
    const production = run(['lint', '--strict', chart, '-f', path.join(fixtures, 'production-values.yaml')])
    t.equal(production.status, 0, `${production.stdout}${production.stderr}`)
  })

  t.test('default values plus the required ones', async (t) => {
    const m = render(t, REQUIRED)
    t.same(Object.keys(m).sort(), ['Deployment', 'Job', 'Secret', 'Service'])
    const deployment = m.Deployment!
    t.equal(deployment.metadata.name, 'roost')
    t.equal(deployment.spec.replicas, 2)
    const pod = deployment.spec.template.spec
    const container = pod.containers[0]
    t.equal(container.image, 'roost:0.1.0')
    t.same(container.livenessProbe.httpGet, { path: '/healthz', port: 'http' })
    t.same(container.readinessProbe.httpGet, { path: '/readyz', port: 'http' })
    t.same(container.lifecycle.preStop.exec.command, ['sleep', '10'])
    t.ok(pod.terminationGracePeriodSeconds > 60, 'grace period longer than a held long-poll')
    t.same(container.resources.requests, { cpu: '250m', memory: '256Mi' })
    t.same(pod.topologySpreadConstraints.map((c: Manifest) => c.topologyKey), ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'])
    t.equal(pod.securityContext.runAsNonRoot, true)
    const env = envOf(container)
    t.equal(env.HOST, '0.0.0.0')
    t.equal(env.HEARTBEAT_INTERVAL_SECONDS, '60')
    t.same(env.DATABASE_URL, { secretKeyRef: { name: 'roost', key: 'DATABASE_URL', optional: false } })
    t.same(env.REDIS_URL, { secretKeyRef: { name: 'roost', key: 'REDIS_URL', optional: true } })
    t.notOk('S3_BUCKET' in env, 'unset settings are left to Roost’s defaults')
    t.same(m.Secret!.stringData, { DATABASE_URL: 'postgresql://roost:pw@db:5432/roost', REDIS_URL: 'redis://redis:6379' })
    t.equal(m.Secret!.metadata.annotations['helm.sh/hook'], 'pre-install,pre-upgrade')
    const job = m.Job!
    t.equal(job.metadata.annotations['helm.sh/hook'], 'pre-install,pre-upgrade')
    t.same(job.spec.template.spec.containers[0].command, ['node', 'dist/src/db/migrate-cli.js'])
    t.same(envOf(job.spec.template.spec.containers[0]).DATABASE_URL, env.DATABASE_URL)
    t.same(m.Service!.spec.ports, [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }])
  })

  t.test('production values: HPA, PDB, ingress, ServiceMonitor, existingSecret, Redis Cluster, S3', async (t) => {
    const m = render(t, ['-f', path.join(fixtures, 'production-values.yaml')])
    t.same(Object.keys(m).sort(), ['Deployment', 'HorizontalPodAutoscaler', 'Ingress', 'Job', 'PodDisruptionBudget', 'Service', 'ServiceMonitor'])
    t.notOk(m.Secret, 'no Secret is created with existingSecret')
    const deployment = m.Deployment!
    t.notOk('replicas' in deployment.spec, 'the HPA owns the replica count')
    const container = deployment.spec.template.spec.containers[0]
    t.equal(container.image, 'registry.example.com/roost:0.1.0')
    const env = envOf(container)
    t.equal(env.REDIS_CLUSTER_NODES, 'redis-0.redis:6379,redis-1.redis:6379,redis-2.redis:6379')
    t.equal(env.S3_ENDPOINT, 'https://s3.eu-west-1.amazonaws.com')
    t.equal(env.S3_BUCKET, 'roost-uploads')
    t.equal(env.S3_REGION, 'eu-west-1')
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'METRICS_TOKEN', 'SMTP_URL']) {
      t.equal(env[name]?.secretKeyRef?.name, 'roost-production', `${name} from the existing Secret`)
    }
    const hpa = m.HorizontalPodAutoscaler!.spec
    t.same(hpa.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'roost' })
    t.equal(hpa.minReplicas, 3)
    t.equal(hpa.maxReplicas, 12)
    t.same(hpa.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 65 } } }])
    t.equal(m.PodDisruptionBudget!.spec.minAvailable, 2)
    t.same(m.PodDisruptionBudget!.spec.selector.matchLabels, deployment.spec.selector.matchLabels)
    const ingress = m.Ingress!
    t.equal(ingress.spec.ingressClassName, 'nginx')
    t.ok(Number(ingress.metadata.annotations['nginx.ingress.kubernetes.io/proxy-read-timeout']) > 60, 'proxy read timeout above the 60 s heartbeat')
    t.same(ingress.spec.rules[0].http.paths[0].backend, { service: { name: 'roost', port: { name: 'http' } } })
    t.same(ingress.spec.tls, [{ secretName: 'chat-example-com-tls', hosts: ['chat.example.com'] }])
    const monitor = m.ServiceMonitor!
    t.equal(monitor.metadata.labels.release, 'prometheus')
    t.same(monitor.spec.endpoints, [{ port: 'http', path: '/metrics', interval: '15s', scrapeTimeout: '10s', authorization: { type: 'Bearer', credentials: { name: 'roost-production', key: 'METRICS_TOKEN' } } }])
  })

  t.test('each of the three ways to reach Redis renders into the environment', async (t) => {
    const database = ['--set', 'secret.DATABASE_URL=postgresql://roost:pw@db:5432/roost']
    const single = envOf(render(t, REQUIRED).Deployment!.spec.template.spec.containers[0])
    t.same(single.REDIS_URL, { secretKeyRef: { name: 'roost', key: 'REDIS_URL', optional: true } })
    t.notOk('REDIS_CLUSTER_NODES' in single || 'REDIS_SENTINELS' in single, 'no cluster or Sentinel settings')
    const cluster = envOf(render(t, [...database, '--set', 'config.REDIS_CLUSTER_NODES=redis-0:7000\\,redis-1:7001']).Deployment!.spec.template.spec.containers[0])
    t.equal(cluster.REDIS_CLUSTER_NODES, 'redis-0:7000,redis-1:7001')
    const sentinel = envOf(
      render(t, [...database, '--set', 'config.REDIS_SENTINELS=s-0:26379\\,s-1:26379', '--set', 'config.REDIS_SENTINEL_MASTER=roost']).Deployment!.spec.template.spec.containers[0],
    )
    t.equal(sentinel.REDIS_SENTINELS, 's-0:26379,s-1:26379')
    t.equal(sentinel.REDIS_SENTINEL_MASTER, 'roost')
    // A secured cluster: the password from the Secret, TLS with a CA mounted from a ConfigMap.
    const securedDeployment = render(t, [
      ...database,
      '--set', 'config.REDIS_CLUSTER_NODES=redis-0:7000',
      '--set', 'secret.REDIS_PASSWORD=pw',
      '--set', 'config.REDIS_TLS=on',
      '--set', 'config.REDIS_TLS_CA_FILE=/etc/redis-ca/ca.crt',
      '--set', 'extraVolumes[0].name=redis-ca', '--set', 'extraVolumes[0].configMap.name=redis-ca',
      '--set', 'extraVolumeMounts[0].name=redis-ca', '--set', 'extraVolumeMounts[0].mountPath=/etc/redis-ca',
    ]).Deployment!.spec.template.spec
    const secured = envOf(securedDeployment.containers[0])
    t.same(secured.REDIS_PASSWORD, { secretKeyRef: { name: 'roost', key: 'REDIS_PASSWORD', optional: true } })
    t.equal(secured.REDIS_TLS, 'on')
    t.equal(secured.REDIS_TLS_CA_FILE, '/etc/redis-ca/ca.crt')
    t.same(securedDeployment.volumes.find((v: { name: string }) => v.name === 'redis-ca'), { name: 'redis-ca', configMap: { name: 'redis-ca' } })
    t.same(securedDeployment.containers[0].volumeMounts.find((m: { name: string }) => m.name === 'redis-ca'), { name: 'redis-ca', mountPath: '/etc/redis-ca' })
  })

  t.test('two ways to reach Redis at once, or a Sentinel master without Sentinels, are refused', async (t) => {
    const both = run(['template', 'roost', chart, ...REQUIRED, '--set', 'config.REDIS_CLUSTER_NODES=redis-0:7000'])
    t.not(both.status, 0)
    t.match(both.stderr, 'secret.REDIS_URL, config.REDIS_CLUSTER_NODES and config.REDIS_SENTINELS are alternatives: set only one')
    const masterOnly = run(['template', 'roost', chart, ...REQUIRED, '--set', 'config.REDIS_SENTINEL_MASTER=roost'])
    t.not(masterOnly.status, 0)
    t.match(masterOnly.stderr, 'config.REDIS_SENTINELS must be set with config.REDIS_SENTINEL_MASTER')
    const malformed = run(['template', 'roost', chart, '--set', 'secret.DATABASE_URL=postgresql://db/roost', '--set', 'config.REDIS_CLUSTER_NODES=redis-0'])
    t.not(malformed.status, 0)
    t.match(malformed.stderr, /config\.REDIS_CLUSTER_NODES: Does not match pattern/)
  })

  t.test('every setting of the startup contract is a chart value', async (t) => {
    const values = parseAllDocuments(readFileSync(path.join(chart, 'values.yaml'), 'utf8'))[0]!.toJS() as Manifest
    const offered = new Set([...Object.keys(values.config), ...Object.keys(values.secret), 'HOST', 'PORT', 'DATA_DIR'])
    // DESIGN.md "Startup contract"; HOST, PORT and DATA_DIR are set by the chart itself.
    const contract = ['PORT', 'HOST', 'DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'EXTERNAL_URL', 'BOOTSTRAP_REALM_NAME', 'BOOTSTRAP_OWNER_EMAIL', 'BOOTSTRAP_OWNER_PASSWORD', 'EVENT_QUEUE_TIMEOUT_SECONDS', 'HEARTBEAT_INTERVAL_SECONDS', 'EVENT_QUEUE_MAX_EVENTS', 'MAX_FILE_UPLOAD_SIZE', 'INVITATION_LINK_VALIDITY_MINUTES', 'SMTP_URL', 'S3_ENDPOINT', 'S3_BUCKET', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'RATE_LIMITING', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS', 'REDIS_SENTINEL_MASTER', 'REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD', 'REDIS_TLS', 'REDIS_TLS_CA_FILE', 'METRICS_TOKEN', 'UPSTREAM_NAMES', 'LISTEN_BACKLOG', 'CORS_ORIGINS', 'TRUSTED_PROXIES', 'LOG_LEVEL']
    t.same(contract.filter((name) => !offered.has(name)), [])
    const readme = readFileSync(path.join(chart, 'README.md'), 'utf8')
    for (const name of [...Object.keys(values.config), ...Object.keys(values.secret)]) {
      t.ok(readme.includes(name), `${name} is described in the chart README`)
    }
    for (const key of Object.keys(values)) t.ok(readme.includes(`\`${key}`), `${key} is described in the chart README`)
  })

  t.test('the schema check can fail: a malformed Deployment is rejected', async (t) => {
    const m = render(t, REQUIRED)
    const broken = structuredClone(m.Deployment!)
    broken.spec.replicas = 'three'
    t.throws(() => new Deployment(broken as never).validate())
  })

  t.test('missing or malformed required settings fail with a clear message', async (t) => {
    const missing = run(['template', 'roost', chart, '-f', path.join(fixtures, 'missing-database-values.yaml')])
    t.not(missing.status, 0)
    t.match(missing.stderr, 'set secret.DATABASE_URL (postgresql://user:password@host:5432/roost) or existingSecret')
    const noRedis = run(['template', 'roost', chart, '--set', 'secret.DATABASE_URL=postgresql://db/roost', '--set', 'replicaCount=3'])
    t.not(noRedis.status, 0)
    t.match(noRedis.stderr, 'more than one replica needs Redis')
    const sentinel = run(['template', 'roost', chart, ...REQUIRED, '--set', 'config.REDIS_SENTINELS=s1:26379'])
    t.match(sentinel.stderr, 'config.REDIS_SENTINEL_MASTER must be set with config.REDIS_SENTINELS')
    const metrics = run(['template', 'roost', chart, ...REQUIRED, '--set', 'serviceMonitor.enabled=true'])
    t.match(metrics.stderr, 'serviceMonitor.enabled needs secret.METRICS_TOKEN')
    const badUrl = run(['template', 'roost', chart, '--set', 'secret.DATABASE_URL=mysql://db/roost', '--set', 'replicaCount=1'])
    t.not(badUrl.status, 0)
    t.match(badUrl.stderr, /secret\.DATABASE_URL: Does not match pattern/)
    const typo = run(['template', 'roost', chart, ...REQUIRED, '--set', 'replicaCont=3'])
    t.not(typo.status, 0)
    t.match(typo.stderr, /replicaCont/)
    // (helm lint renders in lint mode, where `fail` is reported as [INFO], not as a failure: template and install fail.)
  })
}
