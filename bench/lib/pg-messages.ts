/**
 * Walks the messages of one direction of PostgreSQL's wire protocol as chunks arrive, carrying
 * partial headers across chunks, and calls `onType` with each typed message's type byte.
 * `untyped` is how many leading messages have no type byte: 1 for a client (its startup
 * message), 0 for a server. Connections through the bench's proxy do not ask for SSL, so the
 * SSLRequest exchange (an untyped one-byte answer) is not handled.
 */
export function messageReader(untyped: number, onType: (type: number) => void): (chunk: Buffer) => void {
  let skip = 0
  let header = Buffer.alloc(0)
  let leading = untyped
  return (chunk) => {
    let i = 0
    while (i < chunk.length) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length - i)
        skip -= n
        i += n
        continue
      }
      const need = leading > 0 ? 4 : 5
      const take = Math.min(need - header.length, chunk.length - i)
      header = Buffer.concat([header, chunk.subarray(i, i + take)])
      i += take
      if (header.length < need) return
      if (leading > 0) {
        leading--
        skip = header.readInt32BE(0) - 4
      } else {
        onType(header[0]!)
        skip = header.readInt32BE(1) - 4
      }
      header = Buffer.alloc(0)
    }
  }
}
