// The Helm chart (helm/roost): `helm lint` and `helm template` with the
// packaged helm binary, the rendered manifests checked field by field and
// validated against the Kubernetes API schemas (kubernetes-models), every
// example of the chart's README rendered, and missing required settings and
// setups that would lose uploads refused with a clear message.
import t, { type Test } from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
import { Deployment } from 'kubernetes-models/apps/v1'
import { Job } from 'kubernetes-models/batch/v1'
import { ConfigMap, PersistentVolumeClaim, Pod, Secret, Service, ServiceAccount } from 'kubernetes-models/v1'
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1'
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1'
import { Metrics } from '../../src/metrics.js'
import { testConfig } from '../support/config.js'
import { helmBinary } from './helm-binary.js'
import { CONFIG_VARIABLES } from '../../src/config-variables.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const chart = path.join(root, 'helm/roost')
const fixtures = path.join(root, 'test/helm')
const REQUIRED = ['--set', 'secret.DATABASE_URL=postgresql://roost:pw@db:5432/roost', '--set', 'secret.REDIS_URL=redis://redis:6379', '--set', 'config.EXTERNAL_URL=https://chat.example.com']
const S3 = ['--set', 'config.S3_ENDPOINT=https://s3.example.com', '--set', 'config.S3_BUCKET=roost', '--set', 'config.S3_REGION=eu-west-1']

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
    'v1/ServiceAccount': (d) => new ServiceAccount(d as never),
    'v1/PersistentVolumeClaim': (d) => new PersistentVolumeClaim(d as never),
    'v1/Pod': (d) => new Pod(d as never),
    'networking.k8s.io/v1/Ingress': (d) => new Ingress(d as never),
    'networking.k8s.io/v1/NetworkPolicy': (d) => new NetworkPolicy(d as never),
    'autoscaling/v2/HorizontalPodAutoscaler': (d) => new HorizontalPodAutoscaler(d as never),
    'policy/v1/PodDisruptionBudget': (d) => new PodDisruptionBudget(d as never),
    'monitoring.coreos.com/v1/ServiceMonitor': (d) => new ServiceMonitor(d as never),
    'monitoring.coreos.com/v1/PrometheusRule': (d) => new PrometheusRule(d as never),
    'v1/ConfigMap': (d) => new ConfigMap(d as never),
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
    t.same(Object.keys(m).sort(), ['Deployment', 'Job', 'PersistentVolumeClaim', 'Pod', 'Secret', 'Service', 'ServiceAccount'])
    const deployment = m.Deployment!
    t.equal(deployment.metadata.name, 'roost')
    t.equal(deployment.spec.replicas, 1, 'one replica unless uploads are shared')
    t.same(deployment.spec.strategy, { type: 'Recreate' }, 'the ReadWriteOnce uploads volume is released before a new pod mounts it')
    const pod = deployment.spec.template.spec
    const container = pod.containers[0]
    t.equal(container.image, 'roost:0.1.0')
    t.same(container.startupProbe, { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 60 })
    t.same(container.livenessProbe.httpGet, { path: '/healthz', port: 'http' })
    t.same(container.readinessProbe.httpGet, { path: '/readyz', port: 'http' })
    t.same(container.lifecycle.preStop.exec.command, ['sleep', '10'])
    t.ok(pod.terminationGracePeriodSeconds > 60, 'grace period longer than a held long-poll')
    t.same(container.resources.requests, { cpu: '250m', memory: '256Mi' })
    t.same(pod.topologySpreadConstraints.map((c: Manifest) => c.topologyKey), ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'])
    t.equal(pod.securityContext.runAsNonRoot, true)
    t.same(pod.securityContext.seccompProfile, { type: 'RuntimeDefault' }, 'the "restricted" Pod Security level')
    t.same(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })
    t.equal(pod.serviceAccountName, 'roost')
    t.equal(pod.automountServiceAccountToken, false)
    t.same(m.ServiceAccount!.metadata.name, 'roost')
    t.equal(m.ServiceAccount!.automountServiceAccountToken, false)
    // Uploads on a volume that outlives the pod and the release.
    t.same(container.volumeMounts.find((v: Manifest) => v.name === 'uploads'), { name: 'uploads', mountPath: '/data/uploads' })
    t.same(pod.volumes.find((v: Manifest) => v.name === 'uploads'), { name: 'uploads', persistentVolumeClaim: { claimName: 'roost-uploads' } })
    const claim = m.PersistentVolumeClaim!
    t.equal(claim.metadata.name, 'roost-uploads')
    t.equal(claim.metadata.annotations['helm.sh/resource-policy'], 'keep')
    t.same(claim.spec, { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } })
    const env = envOf(container)
    t.equal(env.HOST, '0.0.0.0')
    t.equal(env.EXTERNAL_URL, 'https://chat.example.com')
    t.equal(env.HEARTBEAT_INTERVAL_SECONDS, '60')
    t.same(env.DATABASE_URL, { secretKeyRef: { name: 'roost', key: 'DATABASE_URL', optional: false } })
    t.same(env.REDIS_URL, { secretKeyRef: { name: 'roost', key: 'REDIS_URL', optional: true } })
    t.notOk('S3_BUCKET' in env, 'unset settings are left to Roost’s defaults')
    t.notOk('FCM_SERVICE_ACCOUNT_FILE' in env || 'APNS_KEY_FILE' in env, 'no push key files')
    t.notOk(container.envFrom, 'no extraEnvFrom')
    t.same(m.Secret!.stringData, { DATABASE_URL: 'postgresql://roost:pw@db:5432/roost', REDIS_URL: 'redis://redis:6379' })
    t.equal(m.Secret!.metadata.annotations['helm.sh/hook'], 'pre-install,pre-upgrade')
    t.match(deployment.spec.template.metadata.annotations['checksum/secret'], /^[0-9a-f]{64}$/)
    const job = m.Job!
    t.equal(job.metadata.annotations['helm.sh/hook'], 'pre-install,pre-upgrade')
    t.same(job.spec.template.spec.containers[0].command, ['node', 'dist/src/db/migrate-cli.js'])
    t.same(envOf(job.spec.template.spec.containers[0]).DATABASE_URL, env.DATABASE_URL)
    t.notOk(job.spec.template.spec.serviceAccountName, 'the pre-install Job runs before the ServiceAccount exists')
    t.equal(job.spec.template.spec.automountServiceAccountToken, false)
    t.same(job.spec.template.spec.securityContext.seccompProfile, { type: 'RuntimeDefault' })
    t.same(m.Service!.spec.ports, [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }])
    // `helm test`: a hook pod that fetches /readyz through the Service with the Roost image.
    const test = m.Pod!
    t.equal(test.metadata.annotations['helm.sh/hook'], 'test')
    t.equal(test.spec.restartPolicy, 'Never')
    t.equal(test.spec.containers[0].image, 'roost:0.1.0')
    t.equal(test.spec.containers[0].command.at(-1), 'http://roost:80/readyz')
    t.equal(test.spec.automountServiceAccountToken, false)
    t.same(test.spec.securityContext.seccompProfile, { type: 'RuntimeDefault' })
  })

  t.test('the Secret checksum changes with the Secret, so the pods restart', async (t) => {
    const checksum = (args: string[]) => render(t, args).Deployment!.spec.template.metadata.annotations['checksum/secret']
    const before = checksum(REQUIRED)
    t.equal(checksum(REQUIRED), before, 'stable for the same values')
    t.not(checksum([...REQUIRED, '--set', 'secret.SMTP_URL=smtp://mail:587']), before)
    const existing = render(t, ['--set', 'existingSecret=roost-settings', '--set', 'config.EXTERNAL_URL=https://chat.example.com'])
    t.notOk(existing.Deployment!.spec.template.metadata.annotations?.['checksum/secret'], 'none with existingSecret (the chart cannot see it)')
  })

  t.test('push and mail settings: plain ones in the environment, secrets from the Secret, key files mounted', async (t) => {
    const m = render(t, [
      ...REQUIRED,
      '--set', 'config.VAPID_PUBLIC_KEY=BPublicKey-_', '--set', 'config.VAPID_SUBJECT=mailto:ops@example.com',
      '--set', 'secret.VAPID_PRIVATE_KEY=private',
      '--set', 'config.APNS_KEY_ID=ABCDEFGHIJ', '--set', 'config.APNS_TEAM_ID=KLMNOPQRST', '--set', 'config.APNS_TOPIC=com.example.chat',
      '--set', 'secret.APNS_KEY_P8=-----BEGIN PRIVATE KEY-----',
      '--set', 'secret.FCM_SERVICE_ACCOUNT_JSON=service-account-json', '--set', 'config.FCM_ENDPOINT=https://fcm.example.com',
      '--set', 'secret.SMTP_URL=smtps://roost:pw@mail.example.com:465',
      '--set', 'extraEnvFrom[0].configMapRef.name=roost-extra',
    ])
    const pod = m.Deployment!.spec.template.spec
    const env = envOf(pod.containers[0])
    t.equal(env.VAPID_PUBLIC_KEY, 'BPublicKey-_')
    t.equal(env.VAPID_SUBJECT, 'mailto:ops@example.com')
    t.equal(env.APNS_KEY_ID, 'ABCDEFGHIJ')
    t.equal(env.APNS_TOPIC, 'com.example.chat')
    t.equal(env.FCM_ENDPOINT, 'https://fcm.example.com')
    for (const name of ['VAPID_PRIVATE_KEY', 'SMTP_URL']) t.same(env[name], { secretKeyRef: { name: 'roost', key: name, optional: true } })
    t.notOk('FCM_SERVICE_ACCOUNT_JSON' in env || 'APNS_KEY_P8' in env, 'key contents are files, not variables')
    t.equal(env.FCM_SERVICE_ACCOUNT_FILE, '/etc/roost/push/fcm-service-account.json')
    t.equal(env.APNS_KEY_FILE, '/etc/roost/push/apns-key.p8')
    t.same(pod.containers[0].volumeMounts.find((v: Manifest) => v.name === 'push-keys'), { name: 'push-keys', mountPath: '/etc/roost/push', readOnly: true })
    t.same(pod.volumes.find((v: Manifest) => v.name === 'push-keys'), {
      name: 'push-keys',
      secret: { secretName: 'roost', defaultMode: 0o440, items: [{ key: 'FCM_SERVICE_ACCOUNT_JSON', path: 'fcm-service-account.json' }, { key: 'APNS_KEY_P8', path: 'apns-key.p8' }] },
    })
    t.same(pod.containers[0].envFrom, [{ configMapRef: { name: 'roost-extra' } }])
    t.equal(m.Secret!.stringData.APNS_KEY_P8, '-----BEGIN PRIVATE KEY-----')
    // With existingSecret the key files are turned on by name.
    const existing = render(t, ['--set', 'existingSecret=roost-settings', '--set', 'config.EXTERNAL_URL=https://chat.example.com', '--set', 'pushKeyFiles.apns=true'])
    const existingPod = existing.Deployment!.spec.template.spec
    t.equal(envOf(existingPod.containers[0]).APNS_KEY_FILE, '/etc/roost/push/apns-key.p8')
    t.notOk('FCM_SERVICE_ACCOUNT_FILE' in envOf(existingPod.containers[0]))
    t.same(existingPod.volumes.find((v: Manifest) => v.name === 'push-keys').secret.items, [{ key: 'APNS_KEY_P8', path: 'apns-key.p8' }])
    t.equal(existingPod.volumes.find((v: Manifest) => v.name === 'push-keys').secret.secretName, 'roost-settings')
  })

  t.test('the NetworkPolicy admits the HTTP port from the listed peers and the test pod', async (t) => {
    const open = render(t, [...REQUIRED, '--set', 'networkPolicy.enabled=true']).NetworkPolicy!
    t.same(open.spec.policyTypes, ['Ingress'])
    t.same(open.spec.ingress, [{ ports: [{ port: 'http', protocol: 'TCP' }] }], 'from anywhere when no peers are listed')
    t.same(open.spec.podSelector.matchLabels, { 'app.kubernetes.io/name': 'roost', 'app.kubernetes.io/instance': 'roost', 'app.kubernetes.io/component': 'server' })
    const closed = render(t, [
      ...REQUIRED,
      '--set', 'networkPolicy.enabled=true',
      '--set', 'networkPolicy.ingressFrom[0].namespaceSelector.matchLabels.name=ingress-nginx',
      '--set', 'networkPolicy.egress[0].ports[0].port=5432',
    ]).NetworkPolicy!
    t.same(closed.spec.policyTypes, ['Ingress', 'Egress'])
    t.same(closed.spec.ingress[0].from, [
      { namespaceSelector: { matchLabels: { name: 'ingress-nginx' } } },
      { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'roost', 'app.kubernetes.io/instance': 'roost', 'app.kubernetes.io/component': 'test' } } },
    ])
    t.same(closed.spec.egress, [{ ports: [{ port: 5432 }] }])
  })

  t.test('uploads: S3, a ReadWriteMany volume or an existing claim; subdomain hosts in the ingress', async (t) => {
    const s3 = render(t, [...REQUIRED, ...S3, '--set', 'replicaCount=3'])
    t.notOk(s3.PersistentVolumeClaim, 'no volume with S3')
    t.equal(s3.Deployment!.spec.replicas, 3)
    t.equal(s3.Deployment!.spec.strategy.type, 'RollingUpdate')
    t.notOk(s3.Deployment!.spec.template.spec.volumes.some((v: Manifest) => v.name === 'uploads'))
    const shared = render(t, [...REQUIRED, '--set', 'replicaCount=2', '--set', 'uploads.persistence.accessMode=ReadWriteMany', '--set', 'uploads.persistence.storageClass=nfs'])
    t.same(shared.PersistentVolumeClaim!.spec, { accessModes: ['ReadWriteMany'], storageClassName: 'nfs', resources: { requests: { storage: '10Gi' } } })
    t.same(shared.Deployment!.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } })
    const claimed = render(t, [...REQUIRED, '--set', 'autoscaling.enabled=true', '--set', 'uploads.persistence.existingClaim=team-files', '--set', 'uploads.persistence.accessMode=ReadWriteMany'])
    t.notOk(claimed.PersistentVolumeClaim, 'the existing claim is used, none created')
    t.same(claimed.Deployment!.spec.template.spec.volumes.find((v: Manifest) => v.name === 'uploads'), { name: 'uploads', persistentVolumeClaim: { claimName: 'team-files' } })
    const ingress = render(t, [...REQUIRED, '--set', 'ingress.enabled=true', '--set', 'ingress.subdomains=true']).Ingress!
    t.same(ingress.spec.rules.map((r: Manifest) => r.host), ['chat.example.com', '*.chat.example.com'])
    t.same(ingress.spec.rules[1].http, ingress.spec.rules[0].http)
  })

  t.test('production values: HPA, PDB, ingress, ServiceMonitor, NetworkPolicy, existingSecret, Redis Cluster, S3, push', async (t) => {
    const m = render(t, ['-f', path.join(fixtures, 'production-values.yaml')])
    t.same(Object.keys(m).sort(), ['Deployment', 'HorizontalPodAutoscaler', 'Ingress', 'Job', 'NetworkPolicy', 'Pod', 'PodDisruptionBudget', 'Service', 'ServiceAccount', 'ServiceMonitor'])
    t.notOk(m.PersistentVolumeClaim, 'uploads in S3: no volume')
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
    t.same(ingress.spec.rules.map((r: Manifest) => r.host), ['chat.example.com', '*.chat.example.com'])
    t.same(ingress.spec.tls, [{ secretName: 'chat-example-com-tls', hosts: ['chat.example.com', '*.chat.example.com'] }])
    t.equal(env.APNS_KEY_FILE, '/etc/roost/push/apns-key.p8')
    t.equal(env.VAPID_SUBJECT, 'mailto:ops@example.com')
    t.same(env.VAPID_PRIVATE_KEY, { secretKeyRef: { name: 'roost-production', key: 'VAPID_PRIVATE_KEY', optional: true } })
    t.same(m.NetworkPolicy!.spec.ingress[0].from[0], { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } })
    const monitor = m.ServiceMonitor!
    t.equal(monitor.metadata.labels.release, 'prometheus')
    t.same(monitor.spec.endpoints, [{ port: 'http', path: '/metrics', interval: '15s', scrapeTimeout: '10s', authorization: { type: 'Bearer', credentials: { name: 'roost-production', key: 'METRICS_TOKEN' } } }])
  })

  t.test('monitoring: a PrometheusRule with the alerts and a Grafana dashboard, both optional, naming only metrics Roost exports', async (t) => {
    // Every series a node exports (prom-client's process metrics with the roost_ prefix included).
    const metrics = new Metrics({
      config: testConfig({ metricsToken: 'x' }),
      backlogs: { scheduledMessagesDue: async () => 0, missedMessageEmailsPending: async () => 0, pushNotificationsPending: async () => 0 },
      database: { pool: { totalCount: 0, idleCount: 0, waitingCount: 0 } as never },
      backendErrors: () => 0,
      events: { heldPolls: 0, registeredQueues: 0, deliveredEvents: 0 } as never,
      authCache: { hits: 0, misses: 0, listenerErrors: 0 } as never,
      userDataCache: { hits: 0, misses: 0, listenerErrors: 0 },
    })
    metrics.watchAdmission({ inFlight: 0, refused: {}, releases: 0, eventLoopDelayMs: 0 })
    const exported = new Set<string>()
    for (const metric of metrics.registry.getMetricsAsArray()) {
      exported.add(metric.name)
      if (String(metric.type) === 'histogram') for (const suffix of ['_bucket', '_count', '_sum']) exported.add(`${metric.name}${suffix}`)
    }
    const named = (expr: string) => [...expr.matchAll(/\b(roost_[a-z_]+)/g)].map((m) => m[1]!)

    const m = render(t, [...REQUIRED, '-f', path.join(fixtures, 'monitoring-values.yaml')])
    const rule = m.PrometheusRule!
    t.equal(rule.metadata.labels.release, 'prometheus')
    const rules = rule.spec.groups[0].rules as Manifest[]
    t.same(rules.map((r) => r.alert), ['RoostHighErrorRate', 'RoostHighLatency', 'RoostOverloaded', 'RoostScheduledMessagesBacklog', 'RoostMissedMessageEmailBacklog', 'RoostPushNotificationBacklog'])
    t.ok(rules.every((r) => r.for === '5m' && ['warning', 'critical'].includes(r.labels.severity)))
    t.match(rules[0]!.expr, /status=~"5\.\."[\s\S]*> 0\.02\s*$/, 'the error ratio threshold')
    t.match(rules[1]!.expr, /histogram_quantile\(0\.99,[\s\S]*route!~"\/\(api\/v1\|json\)\/events"[\s\S]*> 2\s*$/, 'p99 without the long-polls')
    t.match(rules[3]!.expr, /roost_scheduled_messages_due\{namespace="chat"\}\) > 100$/)
    t.match(rules[4]!.expr, /> 1000$/)
    t.equal(rules[0]!.annotations.summary, "More than 2 % of Roost's answers are server errors")
    t.match(rules[0]!.annotations.description, /^\{\{ \$value \| humanizePercentage \}\} of the requests/, 'Prometheus templates pass through Helm')
    for (const r of rules) t.same(named(r.expr).filter((name) => !exported.has(name)), [], `${r.alert} names exported metrics`)

    const configMap = m.ConfigMap!
    t.equal(configMap.metadata.name, 'roost-dashboard')
    t.equal(configMap.metadata.labels.grafana_dashboard, '1')
    const dashboard = JSON.parse(configMap.data['roost.json']) as Manifest
    t.same(dashboard, JSON.parse(readFileSync(path.join(chart, 'dashboards/roost.json'), 'utf8')), 'the dashboard file as it is')
    t.equal(dashboard.uid, 'roost-overview')
    t.same(dashboard.templating.list.map((v: Manifest) => v.name), ['datasource', 'job'])
    const targets = (dashboard.panels as Manifest[]).flatMap((p) => p.targets as Manifest[])
    t.ok(targets.length >= 20, `${targets.length} queries`)
    t.ok(targets.every((q) => q.datasource.uid === '${datasource}' && q.expr.includes('job=~"$job"')), 'every query on the chosen data source and jobs')
    const used = new Set(targets.flatMap((q) => named(q.expr as string)))
    t.same([...used].filter((name) => !exported.has(name)), [], 'the dashboard names exported metrics')
    for (const name of ['roost_http_request_duration_seconds_bucket', 'roost_db_query_duration_seconds_bucket', 'roost_redis_command_duration_seconds_bucket', 'roost_messages_sent_total', 'roost_login_refusals_total', 'roost_rate_limit_refusals_total', 'roost_admission_refusals_total']) {
      t.ok(used.has(name), `the dashboard shows ${name}`)
    }
    t.ok(exported.has('roost_build_info'), 'build info is exported (the job variable lists its jobs)')

    const bad = run(['template', 'roost', chart, ...REQUIRED, '--set', 'monitoring.prometheusRule.errorRatio=2'])
    t.not(bad.status, 0)
    t.match(bad.stderr, /monitoring\.prometheusRule\.errorRatio/)
  })

  t.test('each of the three ways to reach Redis renders into the environment', async (t) => {
    const database = ['--set', 'secret.DATABASE_URL=postgresql://roost:pw@db:5432/roost', '--set', 'config.EXTERNAL_URL=https://chat.example.com']
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
    const malformed = run(['template', 'roost', chart, '--set', 'secret.DATABASE_URL=postgresql://db/roost', '--set', 'config.EXTERNAL_URL=https://chat.example.com', '--set', 'config.REDIS_CLUSTER_NODES=redis-0'])
    t.not(malformed.status, 0)
    t.match(malformed.stderr, /config\.REDIS_CLUSTER_NODES: Does not match pattern/)
  })

  t.test('every configuration variable is a chart value', async (t) => {
    const values = parseAllDocuments(readFileSync(path.join(chart, 'values.yaml'), 'utf8'))[0]!.toJS() as Manifest
    // HOST, PORT and DATA_DIR are set by the chart itself; the push key files' paths when pushKeyFiles mounts them;
    // ROOST_COMMIT by the image's build.
    const offered = new Set([...Object.keys(values.config), ...Object.keys(values.secret), 'HOST', 'PORT', 'DATA_DIR', 'FCM_SERVICE_ACCOUNT_FILE', 'APNS_KEY_FILE', 'ROOST_COMMIT'])
    t.same(CONFIG_VARIABLES.map((v) => v.name).filter((name) => !offered.has(name)), [])
    const schema = JSON.parse(readFileSync(path.join(chart, 'values.schema.json'), 'utf8')) as Manifest
    t.same(Object.keys(values.config).filter((name) => !(name in schema.properties.config.properties)), [], 'every config value in the schema')
    t.same(Object.keys(values.secret).filter((name) => !(name in schema.properties.secret.properties)), [], 'every secret value in the schema')
    t.same(Object.keys(values).filter((name) => !(name in schema.properties)), [], 'every top-level value in the schema')
    const readme = readFileSync(path.join(chart, 'README.md'), 'utf8')
    for (const name of [...Object.keys(values.config), ...Object.keys(values.secret)]) {
      t.ok(readme.includes(name), `${name} is described in the chart README`)
    }
    for (const key of Object.keys(values)) t.ok(readme.includes(`\`${key}`), `${key} is described in the chart README`)
  })

  t.test('every example of the chart README renders and passes helm lint --strict', async (t) => {
    const readme = readFileSync(path.join(chart, 'README.md'), 'utf8')
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/\\\n\s*/g, ' '))
    const commands = blocks.flatMap((block) => block.split('\n')).filter((line) => line.startsWith('helm install '))
    t.ok(commands.length >= 3, `the README shows installations (${commands.length})`)
    for (const command of commands) {
      // helm install NAME ./helm/roost ARGS…: arguments are plain words or single-quoted.
      const words = [...command.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!)
      t.equal(words[3], './helm/roost', command)
      const args = words.slice(4).map((word) => (word.endsWith('.yaml') ? path.join(root, word) : word))
      const m = render(t, args)
      t.ok(m.Deployment, `${command}: a Deployment`)
      const lint = run(['lint', '--strict', chart, ...args])
      t.equal(lint.status, 0, `${command}: helm lint --strict\n${lint.stdout}${lint.stderr}`)
    }
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
    const noRedis = run(['template', 'roost', chart, '--set', 'secret.DATABASE_URL=postgresql://db/roost', '--set', 'config.EXTERNAL_URL=https://chat.example.com', '--set', 'replicaCount=3'])
    t.not(noRedis.status, 0)
    t.match(noRedis.stderr, 'more than one replica needs Redis')
    const sentinel = run(['template', 'roost', chart, ...REQUIRED, '--set', 'config.REDIS_SENTINELS=s1:26379'])
    t.match(sentinel.stderr, 'config.REDIS_SENTINEL_MASTER must be set with config.REDIS_SENTINELS')
    const metrics = run(['template', 'roost', chart, ...REQUIRED, '--set', 'serviceMonitor.enabled=true'])
    t.match(metrics.stderr, 'serviceMonitor.enabled needs secret.METRICS_TOKEN')
    const badUrl = run(['template', 'roost', chart, '--set', 'secret.DATABASE_URL=mysql://db/roost', '--set', 'config.EXTERNAL_URL=https://chat.example.com'])
    t.not(badUrl.status, 0)
    t.match(badUrl.stderr, /secret\.DATABASE_URL: Does not match pattern/)
    const typo = run(['template', 'roost', chart, ...REQUIRED, '--set', 'replicaCont=3'])
    t.not(typo.status, 0)
    t.match(typo.stderr, /replicaCont/)
    const badExternalUrl = run(['template', 'roost', chart, ...REQUIRED, '--set', 'config.EXTERNAL_URL=chat.example.com'])
    t.match(badExternalUrl.stderr, /config\.EXTERNAL_URL: Does not match pattern/)
    // (helm lint renders in lint mode, where `fail` is reported as [INFO], not as a failure: template and install fail.)
  })

  t.test('setups that would lose uploads, or lack the organization URL, are refused with a clear message', async (t) => {
    const refused = (tt: Test, args: string[], message: string) => {
      const result = run(['template', 'roost', chart, ...args])
      tt.not(result.status, 0, args.join(' '))
      tt.match(result.stderr, message)
    }
    const database = ['--set', 'secret.DATABASE_URL=postgresql://roost:pw@db:5432/roost']
    refused(t, [...database, '--set', 'secret.REDIS_URL=redis://redis:6379'], "roost: set config.EXTERNAL_URL to the organization's URL as users reach it (https://chat.example.com)")
    const many = 'roost: more than one replica (replicaCount above 1, or autoscaling.enabled) needs uploads that every replica sees: set config.S3_ENDPOINT, config.S3_BUCKET and config.S3_REGION (S3-compatible storage), or uploads.persistence.accessMode=ReadWriteMany'
    refused(t, [...REQUIRED, '--set', 'replicaCount=2'], many)
    refused(t, [...REQUIRED, '--set', 'autoscaling.enabled=true'], many)
    refused(t, [...REQUIRED, '--set', 'replicaCount=2', '--set', 'uploads.persistence.existingClaim=files'], many)
    refused(t, [...REQUIRED, '--set', 'replicaCount=2', '--set', 'uploads.persistence.enabled=false', '--set', 'uploads.persistence.accessMode=ReadWriteMany'], many)
    refused(t, [...REQUIRED, '--set', 'uploads.persistence.enabled=false'], "roost: uploads need S3 (config.S3_*) or uploads.persistence.enabled: on the pod's own disk every upload is lost when the pod restarts")
    refused(t, [...REQUIRED, '--set', 'config.S3_BUCKET=roost'], 'roost: config.S3_ENDPOINT, config.S3_BUCKET and config.S3_REGION go together')
    refused(t, [...REQUIRED, '--set', 'pushKeyFiles.fcm=true'], 'roost: pushKeyFiles.fcm needs secret.FCM_SERVICE_ACCOUNT_JSON (or existingSecret with that key)')
    refused(t, [...REQUIRED, '--set', 'pushKeyFiles.apns=true'], 'roost: pushKeyFiles.apns needs secret.APNS_KEY_P8 (or existingSecret with that key)')
    refused(t, [...REQUIRED, '--set', 'uploads.persistence.accessMode=ReadWriteSometimes'], 'uploads.persistence.accessMode')
    // And what is accepted instead: the same replicas with S3, or with a ReadWriteMany volume.
    t.equal(run(['template', 'roost', chart, ...REQUIRED, ...S3, '--set', 'autoscaling.enabled=true']).status, 0)
    t.equal(run(['template', 'roost', chart, ...REQUIRED, '--set', 'replicaCount=2', '--set', 'uploads.persistence.accessMode=ReadWriteMany']).status, 0)
  })
}
