/**
 * What a cluster is about, in words: class-based TF-IDF (c-TF-IDF, as BERTopic computes it) of each cluster's texts
 * against the others and the unclustered rest, and a name made from the top terms.
 *
 * Term weight of t in class c: tf(t, c) × ln(1 + A / f(t)), where tf is t's count in the class's texts over the
 * class's token count, A the mean token count per class, f(t) t's count over all classes. Tokens come from the
 * classifier's `tokenize` (NFKC, lowercase, URLs folded); stop words and tokens under 3 characters are dropped.
 */
import { tokenize } from '../classifier/tfidf-vectorizer.ts';

const STOP = new Set(
  (
    'the and for are but not you all any can had her was one our out has him his how its may new now old see way who did get got let put say she too use ' +
    'this that with have from they will would there their what about which when make like time just know take into your than then them these some could ' +
    'other only also back after over think well even want because very much more most such here where while were been being does done doing again ' +
    'every should always never still keeps keep kept why it\'s i\'m don\'t doesn\'t didn\'t can\'t won\'t isn\'t each same really please thing things'
  ).split(' '),
);

function terms(text: string): string[] {
  return tokenize(text).filter((t) => t.length >= 3 && !STOP.has(t) && !/^\d+$/.test(t));
}

/**
 * @param classes the texts of each cluster, and last (optionally) the texts of everything else
 * @returns for each class, its `k` highest-weighted terms, best first (ties by term)
 * @example
 * classTfidfTopTerms([['emoji in commit', 'commit emoji again'], ['slow answers']], 2); // [['emoji', 'commit'], ['answers', 'slow']]
 */
export function classTfidfTopTerms(classes: readonly (readonly string[])[], k: number): { term: string; weight: number }[][] {
  const counts = classes.map((texts) => {
    const m = new Map<string, number>();
    for (const t of texts) for (const term of terms(t)) m.set(term, (m.get(term) ?? 0) + 1);
    return m;
  });
  const sizes = counts.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
  const total = new Map<string, number>();
  for (const m of counts) for (const [t, c] of m) total.set(t, (total.get(t) ?? 0) + c);
  const meanSize = sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length);
  return counts.map((m, i) =>
    [...m]
      .map(([term, c]) => ({ term, weight: Math.round((c / Math.max(1, sizes[i]!)) * Math.log(1 + meanSize / total.get(term)!) * 1e4) / 1e4 }))
      .sort((a, b) => b.weight - a.weight || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
      .slice(0, k),
  );
}

/**
 * A human name and a mode id suggested from the first three distinct top terms, e.g.
 * `['emoji', 'emojis', 'commit', 'messages']` → `{ name: 'Emoji commit messages', id: 'emoji-commit-messages' }`.
 */
export function suggestName(topTerms: readonly string[]): { name: string; id: string } {
  const words: string[] = [];
  for (const t of topTerms.map((x) => x.normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, ''))) {
    // One form of a word: "emoji" and "emojis" name the same thing.
    if (t === '' || words.some((w) => t.startsWith(w) || w.startsWith(t))) continue;
    words.push(t);
    if (words.length === 3) break;
  }
  if (words.length === 0) return { name: 'Unnamed cluster', id: 'unnamed-cluster' };
  const name = words.join(' ').replace(/-/g, ' ');
  const id = words.join('-').slice(0, 64).replace(/-+$/g, '');
  return { name: name.charAt(0).toUpperCase() + name.slice(1), id: /^[a-z]/.test(id) ? id : `mode-${id}`.slice(0, 64) };
}
