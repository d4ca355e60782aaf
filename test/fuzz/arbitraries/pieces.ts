import type { Piece } from '../cases.js';
import { pieceBytes } from '../materialize.js';

/** Byte length of the pieces once sent. */
export function piecesLength(pieces: readonly Piece[]): number {
  return pieces.reduce((sum, piece) => sum + pieceBytes(piece).byteLength, 0);
}

/**
 * Splits pieces near byte `offset` (at a character boundary of a text piece, a unit boundary of a
 * repeat), so that bytes can be inserted there while the repeats stay compact.
 */
export function splitPieces(pieces: readonly Piece[], offset: number): [Piece[], Piece[]] {
  let at = 0;
  for (let index = 0; index < pieces.length; index++) {
    const piece = pieces[index]!;
    const length = pieceBytes(piece).byteLength;
    if (at + length <= offset) {
      at += length;
      continue;
    }
    const within = offset - at;
    const [left, right] = splitPiece(piece, within);
    return [
      [...pieces.slice(0, index), ...left],
      [...right, ...pieces.slice(index + 1)],
    ];
  }
  return [[...pieces], []];
}

function splitPiece(piece: Piece, byteOffset: number): [Piece[], Piece[]] {
  if (typeof piece === 'string') {
    // Walk characters until the byte offset is reached, so no character is cut in two.
    let bytes = 0;
    let chars = 0;
    for (const char of piece) {
      const size = Buffer.byteLength(char);
      if (bytes + size > byteOffset) break;
      bytes += size;
      chars += char.length;
    }
    return [nonEmpty(piece.slice(0, chars)), nonEmpty(piece.slice(chars))];
  }
  if ('repeat' in piece) {
    const unit = Buffer.byteLength(piece.repeat);
    const before = Math.min(piece.times, Math.floor(byteOffset / unit));
    return [
      before > 0 ? [{ repeat: piece.repeat, times: before }] : [],
      piece.times - before > 0 ? [{ repeat: piece.repeat, times: piece.times - before }] : [],
    ];
  }
  if ('hex' in piece) {
    const hex = piece.hex.replace(/\s+/g, '');
    return [nonEmpty(hex.slice(0, byteOffset * 2)).map((h) => ({ hex: h })), nonEmpty(hex.slice(byteOffset * 2)).map((h) => ({ hex: h }))];
  }
  return [[piece], []];
}

function nonEmpty(text: string): string[] {
  return text === '' ? [] : [text];
}
