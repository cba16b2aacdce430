/*
 * A cell's source as its context's process runs it: a REPL-mode script (context-host.ts), in
 * which import declarations are not allowed and `import()` finds no module loader (V8's
 * inspector compiles it without the host's options). Both become calls of the context's own
 * importer, which resolves from the context's working directory. Found by a real parser
 * (acorn, passed in: Node's own copy in the context, the npm package in tests), so that an
 * `import` inside a string, a comment or a template is left alone. Pure: unit-tested beside.
 */

/** The global through which a cell imports (context-host.ts defines it, not enumerable). */
export const IMPORTER = '__sandboxImport';

/** The few parts of an ESTree node the rewrite reads. */
export interface AstNode {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

/** acorn's `parse`, with the options below. */
export type Parse = (code: string, options: Record<string, unknown>) => AstNode;

const PARSE_OPTIONS = {
  ecmaVersion: 'latest',
  sourceType: 'script',
  allowAwaitOutsideFunction: true,
  allowImportExportEverywhere: true,
  allowReturnOutsideFunction: false,
  allowHashBang: true,
};

interface Edit {
  start: number;
  end: number;
  text: string;
}

function nameOf(node: unknown): string {
  const named = node as { name?: string; value?: string };
  return named.name ?? JSON.stringify(named.value);
}

/** The call of the importer that stands for an import declaration's module. */
function importCall(code: string, declaration: AstNode): string {
  const source = declaration.source as AstNode;
  const specifier = code.slice(source.start, source.end);
  const attributes = declaration.attributes as AstNode[] | undefined;
  if (attributes === undefined || attributes.length === 0) {
    return `await ${IMPORTER}(${specifier})`;
  }
  const pairs = attributes.map((a) => code.slice(a.start, a.end)).join(', ');
  return `await ${IMPORTER}(${specifier}, { with: { ${pairs} } })`;
}

/**
 * `import x, { a as b } from 'm'` as `const { default: x, a: b } = await importer('m');`
 * (a `const`, which a later cell may declare again in REPL mode). Line breaks are kept, so
 * that line numbers stay the cell's.
 */
function declarationOf(code: string, declaration: AstNode): string {
  const call = importCall(code, declaration);
  const specifiers = declaration.specifiers as AstNode[];
  const namespace = specifiers.find((s) => s.type === 'ImportNamespaceSpecifier');
  const named = specifiers
    .filter((s) => s.type !== 'ImportNamespaceSpecifier')
    .map((s) => {
      const local = nameOf(s.local);
      if (s.type === 'ImportDefaultSpecifier') return `default: ${local}`;
      const imported = nameOf(s.imported);
      return imported === local ? local : `${imported}: ${local}`;
    });
  let statement: string;
  if (specifiers.length === 0) statement = `${call};`;
  else if (namespace === undefined) statement = `const { ${named.join(', ')} } = ${call};`;
  else {
    const name = nameOf(namespace.local);
    const rest = named.length === 0 ? '' : `, { ${named.join(', ')} } = ${name}`;
    statement = `const ${name} = ${call}${rest};`;
  }
  const breaks = code.slice(declaration.start, declaration.end).split('\n').length - 1;
  return `${statement}${'\n'.repeat(breaks)}`;
}

/** Every node of the tree, depth first. */
function walk(node: unknown, visit: (node: AstNode) => void): void {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, visit);
    return;
  }
  if (typeof node !== 'object' || node === null || typeof (node as AstNode).type !== 'string') {
    return;
  }
  visit(node as AstNode);
  for (const [key, child] of Object.entries(node)) {
    if (key !== 'type' && typeof child === 'object') walk(child, visit);
  }
}

/**
 * The cell with its imports made calls of the importer: declarations as above, `import(x)` as
 * `importer(x)`. Code without the word `import`, or that does not parse (V8 then reports its
 * syntax error), is returned as it is.
 */
export function rewriteImports(code: string, parse: () => Parse): string {
  if (!/\bimport\b/.test(code)) return code;
  let tree: AstNode;
  try {
    tree = parse()(code, PARSE_OPTIONS);
  } catch {
    return code;
  }
  const edits: Edit[] = [];
  walk(tree, (node) => {
    if (node.type === 'ImportDeclaration') {
      edits.push({ start: node.start, end: node.end, text: declarationOf(code, node) });
    } else if (node.type === 'ImportExpression') {
      edits.push({ start: node.start, end: node.start + 'import'.length, text: IMPORTER });
    }
  });
  edits.sort((a, b) => b.start - a.start);
  let out = code;
  for (const edit of edits) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

/**
 * What TypeScript-only syntax needs at the least: a `:` (annotations), `<` (type arguments,
 * casts), `?` (optional parameters), `!` (non-null), `@` (decorators), a function's `;`
 * right after its parameters (an overload), a class (a method's overload), or one of these
 * words; and what Node 20 lacks that esbuild lowers (`using`, `accessor`). A match may be plain JavaScript (a ternary, an object): it only
 * sends the cell through esbuild.
 */
const MAYBE_TYPESCRIPT =
  /[:<?!@]|\bfunction\b[^{]*\)\s*;|\b(?:class|as|satisfies|interface|type|enum|namespace|module|declare|abstract|public|private|protected|readonly|override|implements|accessor|using|keyof|infer|asserts|is|unique)\b|\bimport\s+[\w$]+\s*=|\bexport\s*=/;

/**
 * Whether a TypeScript cell may hold syntax of TypeScript's own: if not, it is plain
 * JavaScript as it stands, and needs no trip through esbuild (`x + 1`, `total * 2`).
 */
export function mayBeTypeScript(code: string): boolean {
  return MAYBE_TYPESCRIPT.test(code);
}
