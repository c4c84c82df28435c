// The still image of an animated custom emoji: its first frame as PNG, shown
// by clients whose user turned animation off (`still_url` in `realm_emoji`).
// sharp (libvips) decodes GIF, APNG and WebP in its thread pool, so a large
// image never blocks the event loop.
import sharp from 'sharp'

/** No frame larger than this is decoded (a small file can declare a huge canvas). */
const MAX_INPUT_PIXELS = 4096 * 4096

export class UndecodableImage extends Error {}

export async function firstFramePng(data: Buffer): Promise<Buffer> {
  try {
    return await sharp(data, { pages: 1, limitInputPixels: MAX_INPUT_PIXELS }).png().toBuffer()
  } catch (error) {
    throw new UndecodableImage(error instanceof Error ? error.message : String(error))
  }
}
