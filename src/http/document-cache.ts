import { LRUCache } from 'lru-cache';

/**
 * What a parsed document is taken to keep on the heap, per character of its text: the AST and the token
 * list graphql-js links to it (comments included) come to up to ~100 bytes per character measured.
 */
export const RETAINED_BYTES_PER_CHAR = 128;

/**
 * What a parsed document keeps per token, whatever its characters: a document as dense in tokens as the
 * syntax allows (nested lists, variables: one character a token) keeps about 300 bytes a token, more than
 * its characters account for above.
 */
export const RETAINED_BYTES_PER_TOKEN = 320;

/** The tokens a parsed document (or a fast-path entry holding one) links to; 0 for anything else. */
function tokensOf(value: unknown): number {
  const doc = (value as { document?: unknown })?.document ?? value;
  let token = (doc as { loc?: { startToken?: { next: unknown } } })?.loc?.startToken;
  let n = 0;
  while (token) {
    n++;
    token = token.next as typeof token;
  }
  return n;
}

/** Each cache of parsed documents keeps at most this much, by the estimate above. */
export const DOCUMENT_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * A cache of values kept per GraphQL document text, bounded by what its documents are estimated to keep
 * rather than by their number: valid documents within every limit differ a hundredfold in what they cost,
 * so a count alone let a stream of large distinct documents take gigabytes. Least recently used out first,
 * and nothing kept longer than an hour.
 */
export function documentCache<V extends {}>(maxBytes = DOCUMENT_CACHE_BYTES): LRUCache<string, V> {
  return new LRUCache<string, V>({
    maxSize: maxBytes,
    sizeCalculation: (value, key) => Math.max(1, key.length * RETAINED_BYTES_PER_CHAR, tokensOf(value) * RETAINED_BYTES_PER_TOKEN),
    ttl: 3_600_000,
    updateAgeOnGet: true,
  });
}
