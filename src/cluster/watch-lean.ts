/**
 * Where `metadata.managedFields` sits in one watch line's bytes, so that the decoder can leave it out of
 * JSON.parse. Server-side apply's field ownership is half of a typical pod's JSON (5.4 of 10.8 KB for
 * the benchmark's pod) and most of its parse cost — thousands of tiny `"f:…": {}` objects — yet nothing
 * in the gateway reads it: the cache converts every object into its own model on arrival.
 *
 * One pass over the bytes, aware of strings and escapes, up to the end of the object's metadata: the
 * first object opened at depth 3 (event → object → metadata) must be the value of the key "metadata",
 * as kube-apiserver writes every kind (TypeMeta's strings, then ObjectMeta); otherwise nothing is
 * skipped. The caller parses the whole line again if the line without the range does not parse.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const METADATA = Buffer.from('metadata');
const MANAGED_FIELDS = Buffer.from('managedFields');

/** The byte range [from, to) to cut from buf[start, end) — the key, its array and one comma — or undefined. */
export function managedFieldsRange(buf: Buffer, start: number, end: number): [number, number] | undefined {
  let depth = 0;
  let lastKeyWasMetadata = false;
  let i = start;
  while (i < end) {
    const c = buf[i] as number;
    if (c === QUOTE) {
      const open = i;
      i = stringEnd(buf, i + 1, end);
      if (i < 0) return undefined;
      // i is the closing quote; a key is a string followed by a colon.
      if (buf[i + 1] === COLON) {
        if (depth === 2) lastKeyWasMetadata = same(buf, open + 1, i, METADATA);
        else if (depth === 3 && buf[i + 2] === OPEN_BRACKET && same(buf, open + 1, i, MANAGED_FIELDS)) {
          const close = containerEnd(buf, i + 2, end);
          if (close < 0) return undefined;
          if (buf[open - 1] === COMMA) return [open - 1, close + 1];
          return buf[close + 1] === COMMA ? [open, close + 2] : [open, close + 1];
        }
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth === 3 && !(c === OPEN_BRACE && lastKeyWasMetadata)) return undefined;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      // The metadata closed without managedFields.
      if (depth === 3) return undefined;
      depth--;
    }
    i++;
  }
  return undefined;
}

/** The index of the quote that closes the string whose content starts at `i`, or -1. */
function stringEnd(buf: Buffer, i: number, end: number): number {
  while (i < end) {
    const c = buf[i];
    if (c === BACKSLASH) i += 2;
    else if (c === QUOTE) return i;
    else i++;
  }
  return -1;
}

/** The index of the bracket or brace that closes the one at `i`, or -1. */
function containerEnd(buf: Buffer, i: number, end: number): number {
  let depth = 0;
  while (i < end) {
    const c = buf[i];
    if (c === QUOTE) {
      i = stringEnd(buf, i + 1, end);
      if (i < 0) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i;
    }
    i++;
  }
  return -1;
}

function same(buf: Buffer, from: number, to: number, word: Buffer): boolean {
  return to - from === word.length && buf.compare(word, 0, word.length, from, to) === 0;
}
