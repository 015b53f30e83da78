import { AppError } from '../errors.js'

/** The request body as bytes, refused (413) past `limit` without reading the rest. */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get('content-length') ?? '0')
  if (declared > limit) throw new AppError('PAYLOAD_TOO_LARGE', `The body is larger than ${limit} bytes`)
  if (!request.body) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel()
      throw new AppError('PAYLOAD_TOO_LARGE', `The body is larger than ${limit} bytes`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}
