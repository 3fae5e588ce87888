/**
 * Inferred return types for TypeScript functions that have no annotation. A body replaced by `throw` would change
 * their inferred type to `void`/`never` and break the callers' types; writing the original inferred type into the
 * signature keeps the rest of the repository type-checking. It is signature, not implementation, so it leaks nothing.
 */
import { dirname, join, posix, relative, sep } from 'node:path';
import ts from 'typescript';
import { returnTypeSlot } from '../parse/parse-typescript.ts';

export type ReturnTypeLookup = (path: string, slot: number) => string | undefined;

function compilerOptions(repoDir: string): ts.CompilerOptions {
  const configPath = ts.findConfigFile(repoDir, ts.sys.fileExists, 'tsconfig.json');
  const fallback: ts.CompilerOptions = {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
  };
  if (!configPath || !configPath.startsWith(repoDir)) return { ...fallback, noEmit: true };
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  if (read.error) return { ...fallback, noEmit: true };
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath));
  return { ...parsed.options, noEmit: true, skipLibCheck: true };
}

/** How the importing file writes relative specifiers: with `.ts`, with `.js`, or without an extension. */
function extensionStyle(sf: ts.SourceFile, options: ts.CompilerOptions): 'ts' | 'js' | 'none' {
  for (const st of sf.statements) {
    if ((ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) && st.moduleSpecifier.text.startsWith('.')) {
      const ext = posix.extname(st.moduleSpecifier.text);
      if (['.ts', '.tsx', '.mts', '.cts'].includes(ext)) return 'ts';
      if (['.js', '.jsx', '.mjs', '.cjs'].includes(ext)) return 'js';
      return 'none';
    }
  }
  if (options.allowImportingTsExtensions) return 'ts';
  const r = options.moduleResolution;
  return r === ts.ModuleResolutionKind.Node16 || r === ts.ModuleResolutionKind.NodeNext ? 'js' : 'none';
}

const TS_TO_JS: Record<string, string> = { '.ts': '.js', '.tsx': '.js', '.mts': '.mjs', '.cts': '.cjs' };

/**
 * A return (or property) type as the annotation writes it. The checker prints a type the file does not import as
 * `import("/abs/path/module").Name`; that path becomes a relative specifier in the file's own style. A type from a
 * dependency's files (`node_modules`) is not rewritten: the annotation is then left out.
 */
function printType(type: ts.Type, at: ts.Node, checker: ts.TypeChecker, program: ts.Program, repoDir: string): string | undefined {
  const node = checker.typeToTypeNode(type, at, ts.NodeBuilderFlags.NoTruncation);
  if (!node) return undefined;
  const sf = at.getSourceFile();
  const style = extensionStyle(sf, program.getCompilerOptions());
  let ok = true;
  const specifierFor = (abs: string): string | undefined => {
    if (!abs.startsWith('/') || abs.includes(`${sep}node_modules${sep}`) || !abs.startsWith(repoDir)) return undefined;
    const target = ['.ts', '.tsx', '.mts', '.cts', '.d.ts'].map((e) => abs + e).find((f) => program.getSourceFile(f));
    if (!target) return undefined;
    if (target.endsWith('.d.ts')) return undefined;
    let rel = relative(dirname(sf.fileName), abs).split(sep).join('/');
    if (!rel.startsWith('.')) rel = `./${rel}`;
    const ext = posix.extname(target);
    return style === 'ts' ? rel + ext : style === 'js' ? rel + TS_TO_JS[ext] : rel;
  };
  const rewrite: ts.TransformerFactory<ts.TypeNode> = (context) => {
    const visit = (n: ts.Node): ts.Node => {
      if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
        const spec = specifierFor(n.argument.literal.text);
        if (!spec) {
          ok = false;
          return n;
        }
        const typeArguments = n.typeArguments?.map((t) => ts.visitNode(t, visit) as ts.TypeNode);
        return context.factory.updateImportTypeNode(n, context.factory.createLiteralTypeNode(context.factory.createStringLiteral(spec)), n.attributes, n.qualifier, typeArguments, n.isTypeOf);
      }
      return ts.visitEachChild(n, visit, context);
    };
    return (root) => ts.visitNode(root, visit) as ts.TypeNode;
  };
  const result = ts.transform(node, [rewrite]);
  const out = result.transformed[0]!;
  const printed = ok ? ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed }).printNode(ts.EmitHint.Unspecified, out, sf) : undefined;
  result.dispose();
  return printed?.replace(/\s*\n\s*/g, ' ');
}

/**
 * True when every type name the printed type uses resolves where the annotation goes (a type from a module the file
 * does not import prints by its bare name; annotating with it would not compile, so such a type is left out).
 */
function namesResolve(printed: string, at: ts.Node, checker: ts.TypeChecker): boolean {
  const sf = ts.createSourceFile('annotation.ts', `type __Annotation = ${printed};`, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  let ok = true;
  const visit = (n: ts.Node): void => {
    if (!ok) return;
    if (ts.isTypeReferenceNode(n) || ts.isExpressionWithTypeArguments(n)) {
      let left: ts.Node = ts.isTypeReferenceNode(n) ? n.typeName : n.expression;
      while (ts.isQualifiedName(left)) left = left.left;
      while (ts.isPropertyAccessExpression(left)) left = left.expression;
      if (ts.isIdentifier(left) && !checker.resolveName(left.text, at, ts.SymbolFlags.Type | ts.SymbolFlags.Namespace | ts.SymbolFlags.Alias, false)) ok = false;
    }
    if (ts.isTypeQueryNode(n)) {
      let left: ts.Node = n.exprName;
      while (ts.isQualifiedName(left)) left = left.left;
      if (ts.isIdentifier(left) && !checker.resolveName(left.text, at, ts.SymbolFlags.Value | ts.SymbolFlags.Alias, false)) ok = false;
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return ok;
}

/**
 * Builds one program over the given files (their imports resolve as the repository's tsconfig says) and answers
 * the printed return type at a signature's annotation slot, or undefined when it is `any`/unknown to the checker.
 *
 * @example
 * const lookup = inferReturnTypes(repoDir, ['src/calc.ts']);
 * lookup('src/calc.ts', outline.symbols[0].returnTypeAt!); // 'number'
 */
export function inferReturnTypes(repoDir: string, files: string[]): ReturnTypeLookup {
  const nodes = new Map<string, Map<number, ts.SignatureDeclaration | ts.PropertyDeclaration>>();
  let program: ts.Program | undefined;
  const build = (): ts.Program => (program ??= ts.createProgram(files.map((f) => join(repoDir, f)), compilerOptions(repoDir)));
  return (path, slot) => {
    try {
      const p = build();
      let slots = nodes.get(path);
      if (!slots) {
        // Index the file's function-likes by their annotation slot once; types are computed only when asked.
        slots = new Map();
        nodes.set(path, slots);
        const sf = p.getSourceFile(join(repoDir, path));
        if (sf) {
          const visit = (n: ts.Node): void => {
            if (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isGetAccessorDeclaration(n)) {
              const at = returnTypeSlot(sf.text, n, sf);
              if (at !== undefined) slots!.set(at, n);
            }
            // An un-annotated class property: its slot is just after its name (and any `?` / `!`).
            if (ts.isPropertyDeclaration(n) && !n.type) slots!.set((n.questionToken ?? n.exclamationToken ?? n.name).end, n);
            ts.forEachChild(n, visit);
          };
          visit(sf);
        }
      }
      const node = slots.get(slot);
      if (!node) return undefined;
      const checker = p.getTypeChecker();
      let type: ts.Type;
      if (ts.isPropertyDeclaration(node)) type = checker.getTypeAtLocation(node.name);
      else {
        const sig = checker.getSignatureFromDeclaration(node);
        if (!sig) return undefined;
        type = checker.getReturnTypeOfSignature(sig);
      }
      if (type.flags & ts.TypeFlags.Any) return undefined;
      const printed = printType(type, node, checker, p, repoDir);
      return printed && !printed.includes('...') && namesResolve(printed, node, checker) ? printed : undefined;
    } catch {
      // Inference is a convenience: without it the body is still replaced, only the annotation is missing.
      return undefined;
    }
  };
}
