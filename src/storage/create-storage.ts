// The one place that chooses the upload storage from the configuration.
import type { Config } from '../config.js'
import type { FileStorage } from './file-storage.js'
import { LocalFileStorage } from './local-storage.js'
import { S3FileStorage } from './s3-storage.js'

/** S3 when the S3_* variables are set, else DATA_DIR/uploads. */
export function createStorage(config: Config): FileStorage {
  if (config.s3) return new S3FileStorage(config.s3)
  return new LocalFileStorage(`${config.dataDir}/uploads`)
}
