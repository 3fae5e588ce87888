/**
 * The outline of one source file, whatever parser made it: the symbols strategies can delete (with exact spans as
 * string offsets into the file's text), the imports (for the call graph, the tests' import closure and removing the
 * imports of a deleted file), and the names each symbol's body references (for the intra-file call graph).
 */

export type OutlineLanguage = 'typescript' | 'javascript' | 'python';

/** A half-open span `[start, end)` of string offsets. */
export interface Span {
  start: number;
  end: number;
}

export interface OutlineSymbol {
  kind: 'function' | 'class' | 'method';
  name: string;
  /** `add`, `Circle.area`. */
  qualifiedName: string;
  /** The whole declaration: doc comment, decorators, declaration and its statement's end (a `const` included). */
  span: Span;
  /** The declaration head, up to its body: `export function add(a: number, b: number): number`, `def area(self) -> float:`. */
  signature: string;
  doc?: string;
  /** The part a function-body removal replaces (TypeScript: the `{ … }` block or an arrow's expression; Python: the statements after the docstring). */
  body?: Span & { shape: 'block' | 'expression' | 'python-suite' };
  /** TypeScript: where a return type annotation goes when there is none (just after the parameter list's `)`). */
  returnTypeAt?: number;
  exported: boolean;
  /** `async` functions and methods. */
  async?: boolean;
  /** Free names the body references, and `this.x` / `self.x` as `this.x`. */
  references: string[];
  /** Methods: the class's qualified name. */
  parent?: string;
  /** Classes: their members, in order. */
  members?: OutlineMember[];
  /** Classes: true when they extend another class (a stub constructor then never reaches `super()`). */
  derived?: boolean;
  /** Indentation of the declaration's first line. */
  indent: string;
}

/** A class member, as a class stub sees it. */
export interface OutlineMember {
  kind: 'method' | 'constructor' | 'getter' | 'setter' | 'property' | 'other';
  name?: string;
  span: Span;
  /** Private members (`private`, `#x`, Python `_x` but not dunders) are dropped from a class stub. */
  private: boolean;
  /** The member as kept in a stub (body replaced by a not-implemented error, initializer dropped); undefined drops it. */
  stub?: string;
  /** TypeScript: offset within `stub` where an inferred return type annotation goes. */
  returnTypeAt?: number;
  /** The same place as an offset in the file (what the return-type inference is asked about). */
  returnTypeSlot?: number;
  /** The stub is valid only with the inferred type written in (an un-annotated property). */
  needsType?: boolean;
}

export interface OutlineImport {
  /** The module specifier as written (`./calc.ts`, `pkg.mod`); Python relative imports keep their dots (`..mod`). */
  specifier: string;
  /** Python `from X import a, b`: the imported names (a name may be a submodule). */
  names?: Array<{ name: string; alias?: string }>;
  /** The statement's span (to its line end), when it is a removable top-level statement. */
  statement?: Span;
  kind: 'import' | 'export-from' | 'require' | 'dynamic' | 'python-import' | 'python-from';
}

export interface SourceOutline {
  path: string;
  language: OutlineLanguage;
  text: string;
  symbols: OutlineSymbol[];
  imports: OutlineImport[];
  /** The reason the file could not be parsed (it then has no symbols). */
  error?: string;
  /** Python: the names `__all__` lists, when the module defines it as a literal (its public API then). */
  exportList?: string[];
  /** 1-based numbers of the lines holding code (blank, comment-only and docstring lines left out), where the parser tells. */
  codeLines?: number[];
}

/** The indentation of the line holding `offset`. */
export function indentAt(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  let i = lineStart;
  while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
  return text.slice(lineStart, i);
}

/** Extends a span's end over trailing spaces and one line break, so removing it leaves no blank line behind. */
export function toLineEnd(text: string, end: number): number {
  let i = end;
  while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\r')) i++;
  if (text[i] === '\n') i++;
  return i;
}

/** Moves a span's start back over the indentation before it, when only whitespace precedes it on its line. */
export function toLineStart(text: string, start: number): number {
  let i = start;
  while (i > 0 && (text[i - 1] === ' ' || text[i - 1] === '\t')) i--;
  return i === 0 || text[i - 1] === '\n' ? i : start;
}
