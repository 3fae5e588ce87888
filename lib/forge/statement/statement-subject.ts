/**
 * Who a statement is about: the public API a user of the library calls (what a user's issue names), and the removed
 * private helpers it must not name. Read from the candidate's ranking profile when it has one, otherwise from its
 * symbols and the signatures the agent sees (`export`, `private`, `#x`, a leading underscore in Python).
 */
import type { Candidate } from '../candidate.ts';

export interface StatementSubject {
  /** Public names, the entry point first: `format_filename`, `Counter`, `Counter.add`. */
  publicNames: string[];
  /** Removed names a user never calls (helpers, private members): `_square`, `scale`, `Counter.current`. */
  privateNames: string[];
  /** Declaration heads of the public names (no doc comments, no decorators). */
  publicSignatures: string[];
}

const DECLARATION = /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?|class|def|interface|type|enum|const|let|var)\s+([A-Za-z_$][\w$]*)/;
const MEMBER = /^(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set|declare)\s+)*(#?[A-Za-z_$][\w$]*)\s*[!?]?\s*[(<:=;]/;

/** The declaration line of a signature, without the doc comment or decorators written above it. */
export function declarationLine(signature: string): string {
  const lines = signature.split('\n').map((l) => l.trim());
  let inComment = false;
  for (const line of lines) {
    if (inComment) {
      if (line.includes('*/')) inComment = false;
      continue;
    }
    if (line.startsWith('/*')) {
      inComment = !line.includes('*/');
      continue;
    }
    if (line === '' || line.startsWith('@') || line.startsWith('//') || line.startsWith('#') || line.startsWith('"""') || line.startsWith("'''")) continue;
    return line;
  }
  return lines[0] ?? '';
}

/** The name a signature declares (`add`, `Counter`, `#secret`), undefined for a constructor or what is not a declaration. */
export function declaredName(signature: string): string | undefined {
  const line = declarationLine(signature);
  const name = DECLARATION.exec(line)?.[1] ?? MEMBER.exec(line)?.[1];
  return name === 'constructor' || name === '__init__' ? undefined : name;
}

function isTopLevel(line: string): boolean {
  // A Python method's head reads like a function's: its `self` / `cls` parameter tells them apart.
  return DECLARATION.test(line) && !/^(?:async\s+)?def\s+\w+\s*\(\s*(?:self|cls)\b/.test(line);
}

function pythonPrivate(name: string): boolean {
  return name.startsWith('_') && !/^__\w+__$/.test(name);
}

/** True when a user of the library may call what the signature declares. */
export function isPublicSignature(signature: string, language: Candidate['language']): boolean {
  const line = declarationLine(signature);
  const name = declaredName(signature) ?? '';
  if (language === 'python') return !pythonPrivate(name);
  if (/^(?:private|protected)\b/.test(line) || name.startsWith('#') || name.startsWith('_')) return false;
  // A top-level TypeScript declaration is public when exported; CommonJS JavaScript exports by assignment.
  if (isTopLevel(line) && language === 'typescript') return /^export\b/.test(line);
  return true;
}

function lastSegment(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

/**
 * The public entry point(s) and the private names of a candidate.
 *
 * @example
 * statementSubject(candidate); // { publicNames: ['twice'], privateNames: ['scale'], publicSignatures: ['export function twice(x: number)'] }
 */
export function statementSubject(candidate: Pick<Candidate, 'strategy' | 'language' | 'symbols' | 'context' | 'profile'>): StatementSubject {
  const signatures = candidate.context.signatures;
  const byName = new Map<string, string>();
  for (const s of signatures) {
    const name = declaredName(s);
    if (name && !byName.has(name)) byName.set(name, s);
  }
  const publicNames: string[] = [];
  const privateNames: string[] = [];
  const publicSignatures: string[] = [];
  const addPublic = (name: string, signature: string | undefined) => {
    if (!publicNames.includes(name)) publicNames.push(name);
    if (signature) {
      const line = declarationLine(signature);
      if (!publicSignatures.includes(line)) publicSignatures.push(line);
    }
  };
  if (candidate.strategy === 'file') {
    // The file's top-level declarations: a user imports those.
    for (const s of signatures) {
      const name = declaredName(s);
      if (!name || !isTopLevel(declarationLine(s))) continue;
      if (isPublicSignature(s, candidate.language)) addPublic(name, s);
      else privateNames.push(name);
    }
  } else {
    const names = candidate.symbols.map((s) => s.slice(s.indexOf('#') + 1));
    const privateClasses = new Set<string>();
    for (const name of names) {
      const short = lastSegment(name);
      const owner = name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : undefined;
      const signature = byName.get(short);
      const pub = !(owner && privateClasses.has(owner)) && (signature ? isPublicSignature(signature, candidate.language) : candidate.language === 'python' ? !pythonPrivate(short) : false);
      if (pub) addPublic(name, signature);
      else {
        privateNames.push(name);
        if (!owner) privateClasses.add(name);
      }
    }
  }
  if (candidate.strategy === 'class' && publicNames.length > 0) {
    // A class is shown whole: its head, then the members a user reaches (constructor and fields included).
    publicSignatures.length = 0;
    for (const s of signatures) {
      const line = declarationLine(s);
      if (isPublicSignature(s, candidate.language) && !publicSignatures.includes(line)) publicSignatures.push(line);
    }
  }
  // The ranking's entry point goes first when it is public.
  const entry = candidate.profile?.isPublic ? candidate.profile.entryPoint.slice(candidate.profile.entryPoint.indexOf('#') + 1) : undefined;
  if (entry && candidate.strategy !== 'file') {
    const at = publicNames.indexOf(entry);
    if (at > 0) publicNames.splice(at, 1);
    if (at !== 0) publicNames.unshift(entry);
  }
  // A class's public members are reached through the class: the class is what the user names first.
  const ordered = [...publicNames].sort((a, b) => Number(a.includes('.')) - Number(b.includes('.')));
  const first = entry && publicNames[0] === entry ? [entry, ...ordered.filter((n) => n !== entry)] : ordered;
  return { publicNames: first, privateNames: [...new Set(privateNames)], publicSignatures };
}
