/**
 * An MSB-first bit writer with the Exp-Golomb codes of H.264 (ue(v), se(v)), growing as needed.
 * Whole bytes written on a byte boundary are copied at once (PCM samples are most of the data).
 */
export class BitWriter {
  private buffer = new Uint8Array(1024);
  private length = 0;
  /** Bits already used in the last byte (0 = byte aligned). */
  private bit = 0;

  bits(value: number, count: number): void {
    for (let i = count - 1; i >= 0; i--) this.flag((value >>> i) & 1);
  }

  flag(value: number): void {
    if (this.bit === 0) {
      this.reserve(1);
      this.buffer[this.length++] = 0;
    }
    if (value) this.buffer[this.length - 1]! |= 0x80 >> this.bit;
    this.bit = (this.bit + 1) & 7;
  }

  /** Unsigned Exp-Golomb. */
  ue(value: number): void {
    const code = value + 1;
    const size = 32 - Math.clz32(code);
    this.bits(0, size - 1);
    this.bits(code, size);
  }

  /** Signed Exp-Golomb. */
  se(value: number): void {
    this.ue(value <= 0 ? -2 * value : 2 * value - 1);
  }

  /** Zero bits up to the next byte boundary. */
  alignZero(): void {
    this.bit = 0;
  }

  /** Bytes at a byte boundary (the caller aligned first). */
  bytes(data: Uint8Array): void {
    if (this.bit !== 0) throw new Error('BitWriter.bytes: not byte aligned');
    this.reserve(data.length);
    this.buffer.set(data, this.length);
    this.length += data.length;
  }

  /** rbsp_trailing_bits: a one bit, then zeros to the byte boundary. */
  trailing(): void {
    this.flag(1);
    this.alignZero();
  }

  finish(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + extra));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }
}
