// Uploads in an S3-compatible bucket through @aws-sdk/client-s3, loaded on
// first use so the embedded default never pays for it. Path-style addressing
// keeps MinIO and other S3-compatible servers working.
import type { S3Client } from '@aws-sdk/client-s3'
import type { Config } from '../config.js'
import type { FileStorage, StoredFile } from './file-storage.js'

type S3Settings = NonNullable<Config['s3']>
type S3Module = typeof import('@aws-sdk/client-s3')

export class S3FileStorage implements FileStorage {
  private client: Promise<{ s3: S3Client; sdk: S3Module }> | undefined

  constructor(private readonly settings: S3Settings) {}

  /** Loads the SDK and builds the client; fails with a message naming the S3_* variables. */
  connect(): Promise<{ s3: S3Client; sdk: S3Module }> {
    this.client ??= (async () => {
      let sdk: S3Module
      try {
        sdk = await import('@aws-sdk/client-s3')
      } catch (error) {
        throw new Error(`S3_* is set but @aws-sdk/client-s3 cannot be loaded (run npm ci): ${(error as Error).message}`)
      }
      const s3 = new sdk.S3Client({
        endpoint: this.settings.endpoint,
        region: this.settings.region,
        forcePathStyle: true,
        credentials: { accessKeyId: this.settings.accessKeyId, secretAccessKey: this.settings.secretAccessKey },
      })
      return { s3, sdk }
    })()
    return this.client
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    const { s3, sdk } = await this.connect()
    await s3.send(new sdk.PutObjectCommand({ Bucket: this.settings.bucket, Key: key, Body: data, ContentType: contentType }))
  }

  async get(key: string): Promise<StoredFile | null> {
    const { s3, sdk } = await this.connect()
    try {
      const out = await s3.send(new sdk.GetObjectCommand({ Bucket: this.settings.bucket, Key: key }))
      const bytes = out.Body ? await out.Body.transformToByteArray() : new Uint8Array()
      return { data: Buffer.from(bytes), contentType: out.ContentType ?? 'application/octet-stream' }
    } catch (error) {
      if (error instanceof sdk.NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return null
      throw error
    }
  }

  /** Every object of the bucket (ListObjectsV2, a page at a time). */
  async *keys(): AsyncIterable<string> {
    const { s3, sdk } = await this.connect()
    let token: string | undefined
    do {
      const page = await s3.send(new sdk.ListObjectsV2Command({ Bucket: this.settings.bucket, ContinuationToken: token }))
      for (const object of page.Contents ?? []) if (object.Key !== undefined) yield object.Key
      token = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (token !== undefined)
  }

  /** Reaches the bucket (HeadBucket): a wrong endpoint, bucket or key fails here, at startup, rather than on the first upload. */
  async check(): Promise<void> {
    const { s3, sdk } = await this.connect()
    const { endpoint, bucket } = this.settings
    try {
      await s3.send(new sdk.HeadBucketCommand({ Bucket: bucket }))
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
      const reason = status === 404 ? 'no such bucket' : status === 403 ? 'access denied (check S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY)' : (error as Error).message || (error as Error).name
      throw new Error(`S3 bucket '${bucket}' at ${endpoint} (S3_BUCKET, S3_ENDPOINT) cannot be used: ${reason}`, { cause: error })
    }
  }

  async delete(key: string): Promise<void> {
    const { s3, sdk } = await this.connect()
    await s3.send(new sdk.DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key }))
  }
}
