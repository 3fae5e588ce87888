/**
 * The first sentence of a doc comment or docstring, as prose: comment delimiters, leading `*`, JSDoc / Sphinx tags
 * and examples dropped. What a user reads in the API reference, and what a statement may say the API does.
 */

/**
 * The doc comment's first sentence, or undefined when it has no prose.
 *
 * @example
 * docSentence('/** Adds two numbers, rounded to cents. More here. *\/'); // 'Adds two numbers, rounded to cents.'
 * docSentence('Clamp x into [lo, hi].\n\n:param x: …');                  // 'Clamp x into [lo, hi].'
 */
export function docSentence(doc: string): string | undefined {
  const lines: string[] = [];
  for (const raw of doc.replace(/^\s*\/\*\*?/, '').replace(/\*\/\s*$/, '').replace(/^\s*[rbu]?("""|''')/i, '').replace(/("""|''')\s*$/, '').split('\n')) {
    const line = raw.replace(/^\s*(?:\*|\/\/\/?|#)\s?/, '').trim();
    // Tags, doctest prompts and a blank line end the summary.
    if (/^(?:@|:\w+|>>>|\.\.\s|Args:|Returns?:|Raises:|Example)/.test(line)) break;
    if (line === '') {
      if (lines.length > 0) break;
      continue;
    }
    lines.push(line);
  }
  const text = lines.join(' ').replace(/\s+/g, ' ').trim();
  if (!/[A-Za-z]/.test(text)) return undefined;
  const end = /(?<!\b(?:e\.g|i\.e|etc|vs|cf))[.!?](?=\s|$)/.exec(text);
  return end ? text.slice(0, end.index + 1) : text;
}
