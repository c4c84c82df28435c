// Upstream's names of the identifiers the spec renamed (api-spec §Conventions:
// `service_*`, `client_extavatar`, `legacy_mirror_active`): with
// UPSTREAM_NAMES on (the default), unmodified clients find them beside the
// spec's names, which are always present. Parameters take upstream's names
// through `upstreamAlias()` (http/params.ts).
//
// | spec                    | upstream                | where                                   |
// |-------------------------|-------------------------|-----------------------------------------|
// | service_feature_level   | zulip_feature_level     | /server_settings, /register (output)     |
// | service_version         | zulip_version           | same                                    |
// | service_merge_base      | zulip_merge_base        | same                                    |
// | client_extavatar        | client_gravatar         | /register, /events, /users, /users/{id}, /messages (input) |
// | service_extra_emoji     | zulip_extra_emoji       | reaction_type of reactions and status (input) |
// | legacy_mirror_active    | zephyr_mirror_active    | presence response, only in mirror organizations: never sent by Roost |
import { SERVICE_FEATURE_LEVEL, SERVICE_MERGE_BASE, SERVICE_VERSION } from '../version.js'

/** The version fields of /server_settings and /register. */
export function versionFields(upstreamNames: boolean): Record<string, string | number> {
  const fields: Record<string, string | number> = {
    service_feature_level: SERVICE_FEATURE_LEVEL,
    service_version: SERVICE_VERSION,
    service_merge_base: SERVICE_MERGE_BASE,
  }
  if (upstreamNames) {
    fields.zulip_feature_level = SERVICE_FEATURE_LEVEL
    fields.zulip_version = SERVICE_VERSION
    fields.zulip_merge_base = SERVICE_MERGE_BASE
  }
  return fields
}

/** A reaction_type parameter in the spec's terms (`zulip_extra_emoji` → `service_extra_emoji` while upstream names are on). */
export function reactionTypeParam<T extends string | undefined>(value: T, upstreamNames: boolean): T | 'service_extra_emoji' {
  return upstreamNames && value === 'zulip_extra_emoji' ? 'service_extra_emoji' : value
}
