/**
 * HPACK (RFC 7541): header compression for HTTP/2, both directions of one connection.
 *
 * Header names and values are handled as latin1 strings, one character per octet, which is what
 * HTTP field values are on the wire (RFC 9110 §5.5); a value that is really UTF-8 comes out as
 * its octets, untouched.
 */
import { DEFAULT_HEADER_TABLE_SIZE } from './frames.ts';
import { HuffmanDecodeError, huffmanDecode, huffmanEncode, huffmanEncodedLength } from './huffman.ts';

/** RFC 7541 Appendix A; index 1 is the first entry. */
// prettier-ignore
export const STATIC_TABLE: ReadonlyArray<readonly [string, string]> = [
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'], [':path', '/index.html'],
  [':scheme', 'http'], [':scheme', 'https'], [':status', '200'], [':status', '204'], [':status', '206'],
  [':status', '304'], [':status', '400'], [':status', '404'], [':status', '500'], ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'], ['accept-language', ''], ['accept-ranges', ''], ['accept', ''],
  ['access-control-allow-origin', ''], ['age', ''], ['allow', ''], ['authorization', ''], ['cache-control', ''],
  ['content-disposition', ''], ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''], ['date', ''], ['etag', ''],
  ['expect', ''], ['expires', ''], ['from', ''], ['host', ''], ['if-match', ''], ['if-modified-since', ''],
  ['if-none-match', ''], ['if-range', ''], ['if-unmodified-since', ''], ['last-modified', ''], ['link', ''],
  ['location', ''], ['max-forwards', ''], ['proxy-authenticate', ''], ['proxy-authorization', ''], ['range', ''],
  ['referer', ''], ['refresh', ''], ['retry-after', ''], ['server', ''], ['set-cookie', ''],
  ['strict-transport-security', ''], ['transfer-encoding', ''], ['user-agent', ''], ['vary', ''], ['via', ''],
  ['www-authenticate', ''],
];

/** Octets an entry counts for in a table's size (§4.1). */
const ENTRY_OVERHEAD = 32;
/** Largest integer accepted in a header block: far above any legitimate index or length. */
const MAX_INTEGER = 2 ** 28;

/** A malformed header block: the connection ends with COMPRESSION_ERROR. */
export class HpackError extends Error {
  override readonly name = 'HpackError';
}

const STATIC_FULL = new Map<string, number>();
const STATIC_NAME = new Map<string, number>();
STATIC_TABLE.forEach(([name, value], i) => {
  STATIC_FULL.set(`${name}\0${value}`, i + 1);
  if (!STATIC_NAME.has(name)) STATIC_NAME.set(name, i + 1);
});

/** A dynamic table (§2.3.2): newest entry first in index order, evicted oldest first. */
class DynamicTable {
  /** Oldest first; the entry with index 62 is the last element. */
  readonly entries: Array<readonly [string, string]> = [];
  size = 0;
  /** Entries ever inserted; with `entries.length` it turns an insertion number into an index. */
  inserted = 0;

  constructor(public maxSize: number) {}

  add(name: string, value: string): void {
    const entrySize = name.length + value.length + ENTRY_OVERHEAD;
    this.inserted++;
    if (entrySize > this.maxSize) {
      // An entry larger than the table empties it and is not added (§4.4).
      this.entries.length = 0;
      this.size = 0;
      return;
    }
    this.entries.push([name, value]);
    this.size += entrySize;
    this.evictTo(this.maxSize);
  }

  resize(maxSize: number): void {
    this.maxSize = maxSize;
    this.evictTo(maxSize);
  }

  /** The entry at HPACK index `index` (62 and up), or undefined. */
  at(index: number): readonly [string, string] | undefined {
    return this.entries[this.entries.length - (index - STATIC_TABLE.length)];
  }

  private evictTo(limit: number): void {
    let drop = 0;
    while (this.size > limit && drop < this.entries.length) {
      const [name, value] = this.entries[drop] as readonly [string, string];
      this.size -= name.length + value.length + ENTRY_OVERHEAD;
      drop++;
    }
    if (drop > 0) this.entries.splice(0, drop);
  }
}

/** Decodes the header blocks one peer sends, keeping its dynamic table in step. */
export class HpackDecoder {
  private readonly table: DynamicTable;

  /**
   * @param maxTableSize our SETTINGS_HEADER_TABLE_SIZE: the peer may not grow its table beyond it.
   * @param maxHeaderListSize bound on one decoded block (names + values + 32 per field, as §6.5.2
   * counts SETTINGS_MAX_HEADER_LIST_SIZE).
   */
  constructor(
    private readonly maxTableSize: number = DEFAULT_HEADER_TABLE_SIZE,
    private readonly maxHeaderListSize: number = 64 * 1024,
  ) {
    this.table = new DynamicTable(maxTableSize);
  }

  /** Octets the dynamic table holds (§4.1): never more than `maxTableSize` (the fuzz tests check it). */
  get tableSize(): number {
    return this.table.size;
  }

  /** Decodes one whole header block, calling `onField` per field in order. Throws {@link HpackError}. */
  decode(block: Uint8Array, onField: (name: string, value: string) => void): void {
    const cursor = { at: 0 };
    let listSize = 0;
    let fieldsSeen = false;
    try {
      while (cursor.at < block.length) {
        const first = block[cursor.at] as number;
        let name: string;
        let value: string;
        if (first & 0x80) {
          const entry = this.entry(readInteger(block, cursor, 7));
          [name, value] = entry;
        } else if (first & 0x40) {
          name = this.nameFor(readInteger(block, cursor, 6), block, cursor);
          value = this.readString(block, cursor);
          this.table.add(name, value);
        } else if (first & 0x20) {
          // Dynamic table size update: only before the block's first field (§4.2).
          if (fieldsSeen) throw new HpackError('dynamic table size update after a header field');
          const size = readInteger(block, cursor, 5);
          if (size > this.maxTableSize) throw new HpackError(`dynamic table size update to ${size} exceeds ${this.maxTableSize}`);
          this.table.resize(size);
          continue;
        } else {
          // Literal without indexing (0000) or never indexed (0001): the same for a decoder.
          name = this.nameFor(readInteger(block, cursor, 4), block, cursor);
          value = this.readString(block, cursor);
        }
        fieldsSeen = true;
        listSize += name.length + value.length + ENTRY_OVERHEAD;
        if (listSize > this.maxHeaderListSize) throw new HpackError(`header list exceeds ${this.maxHeaderListSize} octets`);
        onField(name, value);
      }
    } catch (err) {
      if (err instanceof HuffmanDecodeError) throw new HpackError(err.message);
      throw err;
    }
  }

  private entry(index: number): readonly [string, string] {
    if (index === 0) throw new HpackError('header index 0');
    const entry = index <= STATIC_TABLE.length ? STATIC_TABLE[index - 1] : this.table.at(index);
    if (!entry) throw new HpackError(`header index ${index} is beyond the tables`);
    return entry;
  }

  private nameFor(index: number, block: Uint8Array, cursor: { at: number }): string {
    return index === 0 ? this.readString(block, cursor) : this.entry(index)[0];
  }

  private readString(block: Uint8Array, cursor: { at: number }): string {
    if (cursor.at >= block.length) throw new HpackError('truncated string literal');
    const huffman = ((block[cursor.at] as number) & 0x80) !== 0;
    const length = readInteger(block, cursor, 7);
    const end = cursor.at + length;
    if (end > block.length) throw new HpackError('string literal runs past the header block');
    const start = cursor.at;
    cursor.at = end;
    if (huffman) return huffmanDecode(block, start, end, this.maxHeaderListSize).toString('latin1');
    return Buffer.from(block.buffer, block.byteOffset + start, length).toString('latin1');
  }
}

/** Reads an integer with an N-bit prefix (§5.1) at `cursor.at`, moving the cursor past it. */
function readInteger(block: Uint8Array, cursor: { at: number }, prefixBits: number): number {
  const limit = 2 ** prefixBits - 1;
  let value = (block[cursor.at++] as number) & limit;
  if (value < limit) return value;
  let scale = 1;
  for (;;) {
    if (cursor.at >= block.length) throw new HpackError('truncated integer');
    const octet = block[cursor.at++] as number;
    value += (octet & 0x7f) * scale;
    if (value > MAX_INTEGER) throw new HpackError('integer too large');
    if ((octet & 0x80) === 0) return value;
    scale *= 128;
  }
}

/** How the encoder represents a field the tables do not hold whole. */
export type FieldIndexing = 'incremental' | 'without' | 'never';

/**
 * Encodes the header blocks this side sends. Fields whose name and value are already in a table
 * go out as one index; others as literals, added to the dynamic table unless the caller says
 * otherwise (values that change with every request, like `content-length`, are not worth the
 * table space; secrets a third party could probe for go out `never` indexed).
 */
export class HpackEncoder {
  private readonly table: DynamicTable;
  /** Insertion number of each (name, value) the dynamic table holds. */
  private readonly insertionOf = new Map<string, number>();
  private pendingSizeUpdate: number | null = null;

  constructor(maxTableSize: number = DEFAULT_HEADER_TABLE_SIZE) {
    this.table = new DynamicTable(maxTableSize);
  }

  /**
   * The peer's SETTINGS_HEADER_TABLE_SIZE changed: our table follows it (never above the default
   * we started with), and the next block starts with a size update, as §4.2 requires.
   */
  setPeerMaxTableSize(size: number): void {
    const next = Math.min(size, DEFAULT_HEADER_TABLE_SIZE);
    if (next === this.table.maxSize && this.pendingSizeUpdate === null) return;
    this.table.resize(next);
    this.pendingSizeUpdate = next;
    this.forgetEvicted();
  }

  /** One header block for `fields` (name, value, and how to index a literal; default incremental). */
  encode(fields: ReadonlyArray<readonly [string, string, FieldIndexing?]>): Buffer {
    const parts: Buffer[] = [];
    if (this.pendingSizeUpdate !== null) {
      parts.push(integer(this.pendingSizeUpdate, 5, 0x20));
      this.pendingSizeUpdate = null;
    }
    for (const [name, value, indexing = 'incremental'] of fields) parts.push(this.field(name, value, indexing));
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  }

  private field(name: string, value: string, indexing: FieldIndexing): Buffer {
    const key = `${name}\0${value}`;
    const full = STATIC_FULL.get(key) ?? this.dynamicIndex(key);
    if (full !== undefined && indexing !== 'never') return integer(full, 7, 0x80);
    const nameIndex = STATIC_NAME.get(name) ?? 0;
    let head: Buffer;
    if (indexing === 'incremental') head = integer(nameIndex, 6, 0x40);
    else head = integer(nameIndex, 4, indexing === 'never' ? 0x10 : 0x00);
    const parts = nameIndex === 0 ? [head, stringLiteral(name), stringLiteral(value)] : [head, stringLiteral(value)];
    if (indexing === 'incremental') {
      this.table.add(name, value);
      this.insertionOf.set(key, this.table.inserted);
      this.forgetEvicted();
    }
    return Buffer.concat(parts);
  }

  private dynamicIndex(key: string): number | undefined {
    const insertion = this.insertionOf.get(key);
    if (insertion === undefined) return undefined;
    // The newest entry is index 62; each later insertion pushes an entry one further.
    return STATIC_TABLE.length + 1 + (this.table.inserted - insertion);
  }

  /** Drops map entries for fields the table evicted. */
  private forgetEvicted(): void {
    const oldestKept = this.table.inserted - this.table.entries.length + 1;
    for (const [key, insertion] of this.insertionOf) if (insertion < oldestKept) this.insertionOf.delete(key);
  }
}

/** An integer with an N-bit prefix; `firstBits` are the representation's leading flag bits. */
function integer(value: number, prefixBits: number, firstBits: number): Buffer {
  const limit = 2 ** prefixBits - 1;
  if (value < limit) return Buffer.from([firstBits | value]);
  const octets = [firstBits | limit];
  let rest = value - limit;
  while (rest >= 128) {
    octets.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  octets.push(rest);
  return Buffer.from(octets);
}

/** A string literal, Huffman-coded when that is shorter. */
function stringLiteral(text: string): Buffer {
  const raw = Buffer.from(text, 'latin1');
  const coded = huffmanEncodedLength(raw);
  if (coded < raw.length) {
    const length = integer(coded, 7, 0x80);
    const out = Buffer.allocUnsafe(length.length + coded);
    length.copy(out, 0);
    huffmanEncode(raw, out, length.length);
    return out;
  }
  return Buffer.concat([integer(raw.length, 7, 0x00), raw]);
}
