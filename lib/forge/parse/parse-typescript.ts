/**
 * TypeScript / JavaScript outlines through the TypeScript compiler API (a real parser, never patterns): top-level
 * functions, `const`s bound to arrow or function expressions, classes and their members, imports (`import`,
 * `export … from`, `require`, `import()`), and the names each body references.
 */
import ts from 'typescript';
import { indentAt, toLineEnd, toLineStart, type OutlineImport, type OutlineMember, type OutlineSymbol, type SourceOutline, type Span } from './source-outline.ts';

/** The not-implemented statement a removed TypeScript/JavaScript body gets. */
export const TS_NOT_IMPLEMENTED = "throw new Error('not implemented');";

function scriptKind(path: string): ts.ScriptKind {
  if (path.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (path.endsWith('.jsx')) return ts.ScriptKind.JSX;
  if (/\.[cm]?ts$/.test(path)) return ts.ScriptKind.TS;
  return ts.ScriptKind.JS;
}

function hasModifier(node: ts.Node, kind: ts.SyntaxKind): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);
}

/** The leading JSDoc (`/** … *\/`) of a node: its text and where it starts. */
function leadingDoc(text: string, node: ts.Node): { doc: string; start: number } | undefined {
  const ranges = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  const docs = ranges.filter((r) => r.kind === ts.SyntaxKind.MultiLineCommentTrivia && text.startsWith('/**', r.pos));
  const last = docs.at(-1);
  const first = docs[0];
  if (!last || !first) return undefined;
  return { doc: text.slice(last.pos, last.end), start: first.pos };
}

/** Free identifiers a node references, and `this.x` as `this.x`. */
function referencesOf(node: ts.Node): string[] {
  const names = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (ts.isPropertyAccessExpression(n) && n.expression.kind === ts.SyntaxKind.ThisKeyword) names.add(`this.${n.name.text}`);
    if (ts.isIdentifier(n)) {
      const p = n.parent;
      const isMemberName = (ts.isPropertyAccessExpression(p) && p.name === n) || (ts.isPropertyAssignment(p) && p.name === n) || (ts.isMethodDeclaration(p) && p.name === n);
      if (!isMemberName) names.add(n.text);
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return [...names].sort();
}

/** Where a return type annotation goes (exported for the return-type inference): right after the `)` closing the parameter list (none for `x => …`). */
export function returnTypeSlot(text: string, fn: ts.SignatureDeclaration, sf: ts.SourceFile): number | undefined {
  if (fn.type) return undefined;
  const open = fn.getChildren(sf).find((c) => c.kind === ts.SyntaxKind.OpenParenToken);
  if (!open) return undefined;
  const close = fn.getChildren(sf).find((c) => c.kind === ts.SyntaxKind.CloseParenToken);
  return close ? close.end : undefined;
}

function bodySpan(fn: ts.FunctionLikeDeclaration, sf: ts.SourceFile): OutlineSymbol['body'] {
  const body = fn.body;
  if (!body) return undefined;
  return { start: body.getStart(sf), end: body.end, shape: ts.isBlock(body) ? 'block' : 'expression' };
}

function isAsync(node: ts.Node): boolean {
  return hasModifier(node, ts.SyntaxKind.AsyncKeyword);
}

function memberName(member: ts.ClassElement, sf: ts.SourceFile): string | undefined {
  if (ts.isConstructorDeclaration(member)) return 'constructor';
  return member.name ? member.name.getText(sf) : undefined;
}

/** The member as a class stub keeps it: signature and a not-implemented body; a property without its initializer. */
function memberStub(member: ts.ClassElement, sf: ts.SourceFile, text: string): { stub?: string; returnTypeAt?: number; slot?: number; needsType?: boolean } {
  const start = member.getStart(sf);
  if ((ts.isMethodDeclaration(member) || ts.isConstructorDeclaration(member) || ts.isGetAccessorDeclaration(member) || ts.isSetAccessorDeclaration(member)) && member.body) {
    const head = text.slice(start, member.body.getStart(sf)).trimEnd();
    const slot = ts.isConstructorDeclaration(member) || ts.isSetAccessorDeclaration(member) ? undefined : returnTypeSlot(text, member, sf);
    return { stub: `${head} { ${TS_NOT_IMPLEMENTED} }`, ...(slot !== undefined ? { returnTypeAt: slot - start } : {}) };
  }
  if (ts.isPropertyDeclaration(member)) {
    const isStatic = hasModifier(member, ts.SyntaxKind.StaticKeyword);
    const optional = member.questionToken !== undefined || member.exclamationToken !== undefined;
    const nameEnd = (member.questionToken ?? member.exclamationToken ?? member.name).end;
    const head = text.slice(start, nameEnd);
    const bang = member.initializer && !isStatic && !optional && !hasModifier(member, ts.SyntaxKind.DeclareKeyword) ? '!' : '';
    if (member.type) return { stub: `${head}${bang}: ${member.type.getText(sf)};` };
    // No annotation: the stub needs the inferred type (class-candidates drops the field when there is none).
    return { stub: `${head}${bang};`, returnTypeAt: head.length + bang.length, slot: nameEnd, needsType: true };
  }
  if (ts.isMethodDeclaration(member) || ts.isIndexSignatureDeclaration(member)) return { stub: text.slice(start, member.end) }; // overloads, abstract members
  return {};
}

function classMembers(cls: ts.ClassLikeDeclaration, sf: ts.SourceFile, text: string): OutlineMember[] {
  return cls.members.map((member) => {
    const name = memberName(member, sf);
    const isPrivate = hasModifier(member, ts.SyntaxKind.PrivateKeyword) || (member.name !== undefined && ts.isPrivateIdentifier(member.name));
    const kind: OutlineMember['kind'] = ts.isConstructorDeclaration(member)
      ? 'constructor'
      : ts.isMethodDeclaration(member)
        ? 'method'
        : ts.isGetAccessorDeclaration(member)
          ? 'getter'
          : ts.isSetAccessorDeclaration(member)
            ? 'setter'
            : ts.isPropertyDeclaration(member)
              ? 'property'
              : 'other';
    const made = memberStub(member, sf, text);
    // The member's doc comment stays with its stub: it is the specification, not the implementation.
    const doc = made.stub !== undefined ? leadingDoc(text, member) : undefined;
    const prefix = doc ? `${doc.doc}\n${indentAt(text, member.getStart(sf))}` : '';
    const stub = made.stub !== undefined ? prefix + made.stub : undefined;
    const returnTypeAt = made.returnTypeAt !== undefined ? made.returnTypeAt + prefix.length : undefined;
    return { kind, ...(name ? { name } : {}), span: { start: member.getStart(sf), end: member.end }, private: isPrivate, ...(stub !== undefined ? { stub } : {}), ...(returnTypeAt !== undefined ? { returnTypeAt, returnTypeSlot: made.slot ?? member.getStart(sf) + made.returnTypeAt! } : {}), ...(made.needsType ? { needsType: true } : {}) };
  });
}

function fullSpan(text: string, node: ts.Node, sf: ts.SourceFile): Span {
  const doc = leadingDoc(text, node);
  const start = toLineStart(text, doc ? doc.start : node.getStart(sf));
  return { start, end: toLineEnd(text, node.end) };
}

function signatureOf(text: string, from: number, body: OutlineSymbol['body'], fallbackEnd: number): string {
  const end = body ? body.start : fallbackEnd;
  return text.slice(from, end).trim().replace(/\s*(=>)?\s*$/, (m, arrow: string | undefined) => (arrow ? ' =>' : ''));
}

function importsOf(sf: ts.SourceFile, text: string): OutlineImport[] {
  const imports: OutlineImport[] = [];
  const statementSpan = (s: ts.Node): Span => ({ start: toLineStart(text, s.getStart(sf)), end: toLineEnd(text, s.end) });
  for (const s of sf.statements) {
    if (ts.isImportDeclaration(s) && ts.isStringLiteral(s.moduleSpecifier)) imports.push({ kind: 'import', specifier: s.moduleSpecifier.text, statement: statementSpan(s) });
    else if (ts.isExportDeclaration(s) && s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier)) imports.push({ kind: 'export-from', specifier: s.moduleSpecifier.text, statement: statementSpan(s) });
    else if (ts.isImportEqualsDeclaration(s) && ts.isExternalModuleReference(s.moduleReference) && ts.isStringLiteral(s.moduleReference.expression))
      imports.push({ kind: 'require', specifier: s.moduleReference.expression.text, statement: statementSpan(s) });
  }
  // require('x') and import('x') anywhere; a top-level `const x = require('x')` (or a bare `require('x')`) is removable.
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && n.arguments.length === 1 && ts.isStringLiteralLike(n.arguments[0]!)) {
      const spec = (n.arguments[0] as ts.StringLiteralLike).text;
      const isRequire = ts.isIdentifier(n.expression) && n.expression.text === 'require';
      const isDynamic = n.expression.kind === ts.SyntaxKind.ImportKeyword;
      if (isRequire || isDynamic) {
        let statement: Span | undefined;
        if (isRequire) {
          let top: ts.Node = n;
          while (top.parent && top.parent !== sf) top = top.parent;
          const single = ts.isVariableStatement(top) && top.declarationList.declarations.length === 1 && top.declarationList.declarations[0]!.initializer === n;
          const bare = ts.isExpressionStatement(top) && top.expression === n;
          if (single || bare) statement = statementSpan(top);
        }
        imports.push({ kind: isRequire ? 'require' : 'dynamic', specifier: spec, ...(statement ? { statement } : {}) });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return imports;
}

/**
 * Parses one TypeScript or JavaScript file into its outline.
 *
 * @example
 * const outline = parseTypeScript('src/calc.ts', await readFile('src/calc.ts', 'utf8'));
 * outline.symbols.map((s) => s.qualifiedName); // ['add', 'Calculator', 'Calculator.total']
 */
export function parseTypeScript(path: string, text: string): SourceOutline {
  const kind = scriptKind(path);
  const language = kind === ts.ScriptKind.TS || kind === ts.ScriptKind.TSX ? 'typescript' : 'javascript';
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const diagnostics = (sf as unknown as { parseDiagnostics?: ts.Diagnostic[] }).parseDiagnostics ?? [];
  if (diagnostics.length > 0) {
    const first = diagnostics[0]!;
    return { path, language, text, symbols: [], imports: [], error: `syntax error: ${ts.flattenDiagnosticMessageText(first.messageText, ' ')}` };
  }
  const symbols: OutlineSymbol[] = [];
  const exportedNames = new Set<string>();
  for (const s of sf.statements) {
    if (ts.isExportDeclaration(s) && !s.moduleSpecifier && s.exportClause && ts.isNamedExports(s.exportClause)) for (const e of s.exportClause.elements) exportedNames.add((e.propertyName ?? e.name).text);
    if (ts.isExportAssignment(s) && ts.isIdentifier(s.expression)) exportedNames.add(s.expression.text);
    // CommonJS: `module.exports = { a, b: c }`, `module.exports.a = a`, `exports.a = a`.
    if (ts.isExpressionStatement(s) && ts.isBinaryExpression(s.expression) && s.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
      const { left, right } = s.expression;
      const target = left.getText(sf);
      if (target === 'module.exports' && ts.isObjectLiteralExpression(right)) {
        for (const p of right.properties) {
          if (ts.isShorthandPropertyAssignment(p)) exportedNames.add(p.name.text);
          else if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.initializer)) exportedNames.add(p.initializer.text);
        }
      } else if (target === 'module.exports' && ts.isIdentifier(right)) exportedNames.add(right.text);
      else if (ts.isPropertyAccessExpression(left) && ['exports', 'module.exports'].includes(left.expression.getText(sf)) && ts.isIdentifier(right)) exportedNames.add(right.text);
    }
  }
  for (const s of sf.statements) {
    const exported = hasModifier(s, ts.SyntaxKind.ExportKeyword);
    if (ts.isFunctionDeclaration(s) && s.name && s.body) {
      const body = bodySpan(s, sf);
      const slot = returnTypeSlot(text, s, sf);
      symbols.push({
        kind: 'function',
        name: s.name.text,
        qualifiedName: s.name.text,
        span: fullSpan(text, s, sf),
        signature: signatureOf(text, s.getStart(sf), body, s.end),
        ...docOf(text, s),
        ...(body ? { body } : {}),
        ...(slot !== undefined ? { returnTypeAt: slot } : {}),
        exported: exported || exportedNames.has(s.name.text),
        async: isAsync(s),
        references: referencesOf(s.body),
        indent: indentAt(text, s.getStart(sf)),
      });
    } else if (ts.isVariableStatement(s) && s.declarationList.declarations.length === 1) {
      const d = s.declarationList.declarations[0]!;
      let init = d.initializer;
      while (init && (ts.isParenthesizedExpression(init) || ts.isAsExpression(init) || ts.isSatisfiesExpression(init))) init = init.expression;
      if (!ts.isIdentifier(d.name) || !init || !(ts.isArrowFunction(init) || ts.isFunctionExpression(init))) continue;
      const body = bodySpan(init, sf);
      const slot = d.type ? undefined : returnTypeSlot(text, init, sf);
      symbols.push({
        kind: 'function',
        name: d.name.text,
        qualifiedName: d.name.text,
        span: fullSpan(text, s, sf),
        signature: signatureOf(text, s.getStart(sf), body, s.end),
        ...docOf(text, s),
        ...(body ? { body } : {}),
        ...(slot !== undefined ? { returnTypeAt: slot } : {}),
        exported: exported || exportedNames.has(d.name.text),
        async: isAsync(init),
        references: referencesOf(init.body),
        indent: indentAt(text, s.getStart(sf)),
      });
    } else if (ts.isClassDeclaration(s) && s.name) {
      const className = s.name.text;
      const members = classMembers(s, sf, text);
      const openBrace = s.getChildren(sf).find((c) => c.kind === ts.SyntaxKind.OpenBraceToken);
      symbols.push({
        kind: 'class',
        name: className,
        qualifiedName: className,
        span: fullSpan(text, s, sf),
        signature: text.slice(s.getStart(sf), openBrace ? openBrace.getStart(sf) : s.end).trim(),
        ...docOf(text, s),
        exported: exported || exportedNames.has(className),
        references: referencesOf(s),
        members,
        derived: (s.heritageClauses ?? []).some((h) => h.token === ts.SyntaxKind.ExtendsKeyword),
        indent: indentAt(text, s.getStart(sf)),
        ...(openBrace ? { body: { start: openBrace.getStart(sf), end: s.end, shape: 'block' as const } } : {}),
      });
      for (const m of s.members) {
        if (!(ts.isMethodDeclaration(m) || ts.isGetAccessorDeclaration(m)) || !m.body || !m.name || ts.isPrivateIdentifier(m.name)) continue;
        const name = m.name.getText(sf);
        const body = bodySpan(m, sf);
        const slot = returnTypeSlot(text, m, sf);
        symbols.push({
          kind: 'method',
          name,
          qualifiedName: `${className}.${name}`,
          parent: className,
          span: fullSpan(text, m, sf),
          signature: signatureOf(text, m.getStart(sf), body, m.end),
          ...docOf(text, m),
          ...(body ? { body } : {}),
          ...(slot !== undefined ? { returnTypeAt: slot } : {}),
          exported: !hasModifier(m, ts.SyntaxKind.PrivateKeyword),
          async: isAsync(m),
          references: referencesOf(m.body),
          indent: indentAt(text, m.getStart(sf)),
        });
      }
    }
  }
  return { path, language, text, symbols, imports: importsOf(sf, text) };
}

function docOf(text: string, node: ts.Node): { doc?: string } {
  const d = leadingDoc(text, node);
  return d ? { doc: d.doc } : {};
}
