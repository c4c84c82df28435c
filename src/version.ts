// The API level Roost speaks: the upstream 9.0 interface (feature level 277).
export const SERVICE_FEATURE_LEVEL = 277
export const SERVICE_VERSION = '9.0'
export const SERVICE_MERGE_BASE = ''
