// Upload storage behind one interface: local disk (embedded default) or an
// S3-compatible bucket (production, every node sees the same files).
// The implementations are chosen by create-storage.ts.

/** A file of a multipart request, read into memory (the HTTP layer bounds its size). */
export interface UploadedFile {
  fieldName: string
  fileName: string
  contentType: string
  data: Buffer
}

export interface StoredFile {
  data: Buffer
  contentType: string
}

export interface FileStorage {
  /** Stores `data` under `key` (a path such as "<realm_id>/ab/<token>/<name>"). */
  put(key: string, data: Buffer, contentType: string): Promise<void>
  /** The file, or null when no file has that key. */
  get(key: string): Promise<StoredFile | null>
  /** Removes the file; a missing key is not an error. */
  delete(key: string): Promise<void>
  /** Every stored key, in no particular order (backups read the files through get()). */
  keys(): AsyncIterable<string>
  /** Fails when the storage cannot be used (called at startup, so a bad configuration stops the server). */
  check(): Promise<void>
}
