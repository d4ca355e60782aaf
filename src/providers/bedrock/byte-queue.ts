/**
 * The bytes of a stream not read yet, kept as the pieces they came in. Adding a read copies
 * nothing, and a message is copied once when it is taken (not at all when it lies in one piece),
 * so a 16 MiB message arriving in 16 KiB reads costs its size, not the gigabytes that joining
 * the rest to every read would.
 */
export class ByteQueue {
  private readonly pieces: Uint8Array[] = [];
  /** Bytes of the first piece already taken. */
  private offset = 0;
  /** Bytes held, not taken yet. */
  length = 0;

  push(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.pieces.push(piece);
    this.length += piece.length;
  }

  /** The big-endian uint32 the queue starts with (it holds at least 4 bytes). */
  peekUint32(): number {
    let value = 0;
    let piece = 0;
    let at = this.offset;
    for (let byte = 0; byte < 4; byte++) {
      while (at >= this.pieces[piece]!.length) {
        piece++;
        at = 0;
      }
      value = value * 256 + this.pieces[piece]![at++]!;
    }
    return value;
  }

  /** The first `count` bytes (the queue holds them), removed: a view when they lie in one piece, else one copy. */
  take(count: number): Uint8Array {
    this.length -= count;
    const first = this.pieces[0]!;
    if (first.length - this.offset >= count) {
      const view = first.subarray(this.offset, this.offset + count);
      this.consume(count);
      return view;
    }
    const bytes = new Uint8Array(count);
    for (let filled = 0; filled < count; ) {
      const part = this.pieces[0]!.subarray(this.offset, this.offset + count - filled);
      bytes.set(part, filled);
      filled += part.length;
      this.consume(part.length);
    }
    return bytes;
  }

  /** Moves `count` bytes into the first piece (at most to its end), dropping it once it is used up. */
  private consume(count: number): void {
    this.offset += count;
    if (this.offset === this.pieces[0]!.length) {
      this.pieces.shift();
      this.offset = 0;
    }
  }
}
