// The import rules of src/ (STYLE.md): dependencies point one way,
//   http → actions | queries → access, present, domain, db, storage, events
// domain/ imports no other layer, events/ knows no HTTP and no backends/,
// only actions/ publish, and nothing imports in a circle. web/ may take the
// event types from src/events/schemas only. Checked by
// test/architecture/dependencies.test.ts in the unit phase.
const ENTRY = '^src/(server|serve|app|node-services)\\.ts$|^src/cli/'
const WORKERS = '^src/(scheduler|notifications)/'
/** `from` may not import `to` (type-only imports included). */
const never = (name, comment, from, to, extra = {}) => ({ name, comment, severity: 'error', from: { path: from, ...extra.from }, to: { path: to, ...extra.to } })
/** `from` may import only types from `to`. */
const typesOnly = (name, comment, from, to, extra = {}) => never(name, comment, from, to, { ...extra, to: { dependencyTypesNot: ['type-only'], ...extra.to } })

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules import each other in a circle (type-only imports count too).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    never('entry-points-are-not-imported', 'server.ts (and serve.ts, which it loads after tracing), app.ts, node-services.ts and cli/ assemble the node; nothing below imports them.', '^src/(?!cli/)', ENTRY, { from: { pathNot: ENTRY } }),
    never('http-is-on-top', 'Only the entry points import http/.', '^src/', '^src/http/', { from: { pathNot: `^src/http/|${ENTRY}` } }),
    never('actions-from-above-only', 'actions/ are called by http/, the workers and the entry points.', '^src/', '^src/actions/', {
      from: { pathNot: `^src/(actions|http)/|${ENTRY}|^src/scheduler/(delivery|stream-activity)\\.ts$` },
    }),
    never('queries-from-above-only', 'queries/ are read by http/, actions/, the workers and the entry points.', '^src/(access|present|domain|db|storage|events|presence|ratelimit|mail|backends)/|^src/(metrics|errors|config|version)\\.ts$', '^src/queries/'),
    never('access-below-actions-and-queries', 'access/ is used by actions/ and queries/, never the reverse.', '^src/(present|domain|db|storage|events|ratelimit|mail|backends)/', '^src/access/'),
    never('jobs-serve-the-workers', 'jobs/ is the leased-job mechanism the workers share; it imports no worker and nothing above the database.', '^src/jobs/', '^src/(http|actions|queries|access|present|notifications|scheduler|events)/'),
    never('workers-are-not-imported-below', 'The scheduler and notification workers sit beside actions/.', '^src/(access|queries|present|domain|db|storage|events|presence|ratelimit|mail|backends)/', WORKERS),
    never('domain-is-pure', 'domain/ imports no other layer (errors.ts, version.ts and the database row types excepted).', '^src/domain/', '^src/', {
      to: { pathNot: '^src/domain/|^src/(errors|version)\\.ts$|^src/db/index\\.ts$' },
    }),
    typesOnly('domain-row-types-only', 'domain/ may name the Prisma row types, never use the database.', '^src/domain/', '^src/db/'),
    never('events-know-no-http-nor-backends', 'events/ knows no HTTP, no backends/ and nothing above it.', '^src/events/', '^src/(http|backends|actions|queries|access|presence|notifications|scheduler)/'),
    never('present-is-below-events-users', 'present/ turns rows into API objects; it imports no access/ and no events/ builders.', '^src/present/', '^src/(access|events)/', {
      to: { pathNot: '^src/events/schemas/' },
    }),
    typesOnly('present-takes-event-types-only', 'present/ may name the wire types of events/schemas, never build events.', '^src/present/', '^src/events/'),
    typesOnly('services-is-types-only', 'services.ts names the services; node-services.ts builds them.', '^src/services\\.ts$', '^src/'),
    typesOnly('only-actions-publish', 'Publishing (actions/context.ts: inTransaction, publishAll) is for actions/ alone.', '^src/', '^src/actions/context\\.ts$', { from: { pathNot: '^src/actions/' } }),
    // Known exception: web/src/lib/emoji.ts reads the emoji name table (data, no code).
    never('web-takes-event-types-only', 'The web client may use the event types of src/events/schemas only.', '^web/', '^src/', { to: { pathNot: '^src/events/schemas/|^src/domain/emoji-names\\.json$' } }),
    typesOnly('web-event-imports-are-types', 'The web client imports types from src/events/schemas, never server code.', '^web/', '^src/', { to: { pathNot: '^src/domain/emoji-names\\.json$' } }),
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^src/db/generated/|node_modules' },
    doNotFollow: { path: 'node_modules' },
  },
}
