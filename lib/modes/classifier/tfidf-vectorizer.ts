/**
 * TF-IDF features of a comment: word unigrams and bigrams, and character 3–5-grams inside word boundaries
 * (scikit-learn's `analyzer='char_wb'`), which carry typos ("reformated", "scrren") and inflections to the same features.
 * Term frequencies are sublinear (1 + ln tf), idf is smoothed (ln((1 + n) / (1 + df)) + 1), and each of the two blocks
 * is L2-normalised and scaled by 1/√2, so a document vector has unit length.
 *
 * Vocabulary order is sorted, idf is float32: a vectoriser restored from its state is bit-identical.
 */

export interface TfidfState {
  wordVocab: string[];
  wordIdf: Float32Array;
  charVocab: string[];
  charIdf: Float32Array;
}

export interface SparseVector {
  idx: Int32Array;
  val: Float32Array;
}

export interface TfidfVectorizer {
  /** Total feature count (words then characters). */
  readonly features: number;
  transform(text: string): SparseVector;
  state(): TfidfState;
}

const TOKEN = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;
const URL = /\bhttps?:\/\/\S+/gu;
/** Tokens longer than this (hashes, base64, minified code) give no character n-grams. */
const MAX_CHAR_TOKEN = 32;
const CHAR_MIN = 3;
const CHAR_MAX = 5;

/** Lowercased word tokens; URLs become the token `urltoken`, apostrophes are normalised. */
export function tokenize(text: string): string[] {
  const normal = text.normalize('NFKC').toLowerCase().replace(URL, ' urltoken ').replace(/’/g, "'");
  return normal.match(TOKEN) ?? [];
}

function wordFeatures(tokens: string[], emit: (key: string) => void): void {
  for (let i = 0; i < tokens.length; i++) {
    emit(tokens[i]!);
    if (i + 1 < tokens.length) emit(`${tokens[i]} ${tokens[i + 1]}`);
  }
}

function charFeatures(tokens: string[], emit: (key: string) => void): void {
  for (const t of tokens) {
    if (t.length > MAX_CHAR_TOKEN) continue;
    const padded = ` ${t} `;
    for (let n = CHAR_MIN; n <= CHAR_MAX; n++) {
      if (padded.length < n) break;
      for (let i = 0; i + n <= padded.length; i++) emit(padded.slice(i, i + n));
    }
  }
}

/** Distinct tokens whose character-n-gram features are remembered (words repeat: most lookups hit). */
const TOKEN_CACHE_MAX = 50_000;

class Vectorizer implements TfidfVectorizer {
  readonly features: number;
  readonly #wordIndex: Map<string, number>;
  readonly #charIndex: Map<string, number>;
  /** token → indices of its known character n-grams (with repeats), so common words are not re-sliced each time. */
  readonly #tokenChars = new Map<string, Int32Array>();
  readonly #s: TfidfState;
  constructor(s: TfidfState) {
    this.#s = s;
    this.#wordIndex = new Map(s.wordVocab.map((k, i) => [k, i]));
    const offset = s.wordVocab.length;
    this.#charIndex = new Map(s.charVocab.map((k, i) => [k, offset + i]));
    this.features = s.wordVocab.length + s.charVocab.length;
  }

  transform(text: string): SparseVector {
    const tokens = tokenize(text);
    const counts = new Map<number, number>();
    const wi = this.#wordIndex;
    const ci = this.#charIndex;
    wordFeatures(tokens, (k) => {
      const j = wi.get(k);
      if (j !== undefined) counts.set(j, (counts.get(j) ?? 0) + 1);
    });
    for (const t of tokens) {
      let known = this.#tokenChars.get(t);
      if (known === undefined) {
        const found: number[] = [];
        charFeatures([t], (k) => {
          const j = ci.get(k);
          if (j !== undefined) found.push(j);
        });
        known = Int32Array.from(found);
        if (this.#tokenChars.size < TOKEN_CACHE_MAX) this.#tokenChars.set(t, known);
      }
      for (let q = 0; q < known.length; q++) counts.set(known[q]!, (counts.get(known[q]!) ?? 0) + 1);
    }
    const n = counts.size;
    const idx = new Int32Array(n);
    const raw = new Float64Array(n);
    const wordEnd = this.#s.wordVocab.length;
    let normW = 0;
    let normC = 0;
    let p = 0;
    for (const [j, tf] of counts) {
      const idf = j < wordEnd ? this.#s.wordIdf[j]! : this.#s.charIdf[j - wordEnd]!;
      const v = (1 + Math.log(tf)) * idf;
      idx[p] = j;
      raw[p] = v;
      if (j < wordEnd) normW += v * v;
      else normC += v * v;
      p++;
    }
    const sw = normW > 0 ? Math.SQRT1_2 / Math.sqrt(normW) : 0;
    const sc = normC > 0 ? Math.SQRT1_2 / Math.sqrt(normC) : 0;
    const val = new Float32Array(n);
    for (let q = 0; q < n; q++) val[q] = raw[q]! * (idx[q]! < wordEnd ? sw : sc);
    return { idx, val };
  }

  state(): TfidfState {
    return this.#s;
  }
}

/** Learns the vocabulary and idf from training texts, keeping features seen in at least `minDf` documents. */
export function fitTfidf(texts: string[], { minDf }: { minDf: number }): TfidfVectorizer {
  const wordDf = new Map<string, number>();
  const charDf = new Map<string, number>();
  for (const text of texts) {
    const tokens = tokenize(text);
    const seenW = new Set<string>();
    const seenC = new Set<string>();
    wordFeatures(tokens, (k) => seenW.add(k));
    charFeatures(tokens, (k) => seenC.add(k));
    for (const k of seenW) wordDf.set(k, (wordDf.get(k) ?? 0) + 1);
    for (const k of seenC) charDf.set(k, (charDf.get(k) ?? 0) + 1);
  }
  const n = texts.length;
  const build = (df: Map<string, number>): [string[], Float32Array] => {
    const vocab = [...df.entries()].filter(([, d]) => d >= minDf).map(([k]) => k).sort();
    const idf = Float32Array.from(vocab, (k) => Math.log((1 + n) / (1 + df.get(k)!)) + 1);
    return [vocab, idf];
  };
  const [wordVocab, wordIdf] = build(wordDf);
  const [charVocab, charIdf] = build(charDf);
  return new Vectorizer({ wordVocab, wordIdf, charVocab, charIdf });
}

export function restoreTfidf(state: TfidfState): TfidfVectorizer {
  if (state.wordIdf.length !== state.wordVocab.length || state.charIdf.length !== state.charVocab.length) {
    throw new RangeError('vocabulary and idf lengths differ');
  }
  return new Vectorizer(state);
}
