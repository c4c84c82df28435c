// The API level Roost speaks: the upstream 10.1 interface (feature level 372;
// docs/feature-levels.md lists every change above 277 and what Roost does with it).
export const SERVICE_FEATURE_LEVEL = 372
export const SERVICE_VERSION = '10.1'
export const SERVICE_MERGE_BASE = ''
