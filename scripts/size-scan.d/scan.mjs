// The size scan (issue 41): no source file over 400 lines, no function over 80 (TypeScript/JavaScript,
// Go, C). Functions are measured from their first to their last line, nested ones included: methods,
// arrow functions and function expressions (named after the variable, property or call that takes
// them, so a `describe`/`it` callback counts as a function) and Go function literals. Test code is
// listed apart from production code. Exits 1 when anything is over, 2 when it cannot scan.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
let root = join(here, '..', '..');
const ts = createRequire(join(root, 'package.json'))('typescript');

const HELP = `usage: scripts/size-scan [--max-file N] [--max-function N] [--json] [--root DIR] [PATH...]
Scans the tracked and new (not ignored) .ts/.tsx/.mts/.cts/.js/.mjs/.cjs/.go/.c/.h files under PATH
(default: the whole repository), skipping generated code, dist/, node_modules and migrations.
  --max-file N       a file over N lines is reported (default 400)
  --max-function N   a function over N lines is reported (default 80)
  --json             print the findings as JSON
  --root DIR         the repository to scan (default: this one)
Exit status: 0 nothing over, 1 something over, 2 cannot scan.`;

const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs|go|c|h)$/;
const SKIPPED = [
  /(^|\/)node_modules\//,
  /(^|\/)dist\//,
  /(^|\/)migrations\//,
  /^packages\/proto\/src\/generated\//,
  /^packages\/sdk\/src\/generated\//,
  /^packages\/sdk\/docs\//,
  /\.d\.ts$/,
];
const TEST = [/(^|\/)(test|tests|__tests__|testing)\//, /\.test\.[cm]?[jt]sx?$/, /_test\.go$/];

function main() {
  const { values, positionals } = parseArgs({
    options: {
      'max-file': { type: 'string', default: '400' },
      'max-function': { type: 'string', default: '80' },
      json: { type: 'boolean', default: false },
      root: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (values.root !== undefined) root = values.root;
  const maxFile = Number(values['max-file']);
  const maxFunction = Number(values['max-function']);
  if (!Number.isInteger(maxFile) || !Number.isInteger(maxFunction)) {
    console.error('size-scan: --max-file and --max-function take whole numbers');
    return 2;
  }
  const files = sourceFiles(positionals);
  const findings = [];
  for (const path of files) {
    const lines = lineCount(readFileSync(join(root, path), 'utf8'));
    if (lines > maxFile) findings.push({ kind: 'file', path, lines, name: '', line: 1 });
  }
  for (const fn of functions(files)) {
    const lines = fn.end - fn.start + 1;
    if (lines > maxFunction)
      findings.push({ kind: 'function', path: fn.path, lines, name: fn.name, line: fn.start });
  }
  for (const finding of findings) finding.test = TEST.some((pattern) => pattern.test(finding.path));
  print(findings, { maxFile, maxFunction, json: values.json, scanned: files.length });
  return findings.length > 0 ? 1 : 0;
}

function sourceFiles(paths) {
  const listed = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...paths],
    {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    },
  );
  const files = [...new Set(listed.split('\0'))].filter(
    (path) => SOURCE.test(path) && !SKIPPED.some((pattern) => pattern.test(path)),
  );
  return files.filter((path) => {
    try {
      readFileSync(join(root, path));
      return true;
    } catch {
      return false; // deleted in the work tree, not yet staged
    }
  });
}

function lineCount(text) {
  if (text.length === 0) return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

function functions(files) {
  const found = [];
  const goFiles = [];
  for (const path of files) {
    if (path.endsWith('.go')) goFiles.push(path);
    else if (/\.[ch]$/.test(path))
      found.push(...cFunctions(path, readFileSync(join(root, path), 'utf8')));
    else found.push(...tsFunctions(path, readFileSync(join(root, path), 'utf8')));
  }
  if (goFiles.length > 0) found.push(...goFunctions(goFiles));
  return found;
}

// --- TypeScript and JavaScript, through the compiler's own parser ---

function tsFunctions(path, text) {
  const kind = /\.[jt]sx$/.test(path)
    ? ts.ScriptKind.TSX
    : /\.[cm]?js$/.test(path)
      ? ts.ScriptKind.JS
      : ts.ScriptKind.TS;
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const found = [];
  const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      found.push({
        path,
        start: lineOf(node.getStart(source)),
        end: lineOf(node.getEnd()),
        name: tsName(node, source),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function tsName(node, source) {
  if (node.name && !ts.isComputedPropertyName(node.name)) {
    const own = node.name.getText(source);
    const owner =
      node.parent && ts.isClassLike(node.parent) && node.parent.name
        ? `${node.parent.name.text}.`
        : '';
    return owner + own;
  }
  if (ts.isConstructorDeclaration(node)) return `${node.parent.name?.text ?? 'class'}.constructor`;
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return parent.name.getText(source);
  }
  if (ts.isCallExpression(parent)) return `callback of ${callName(parent, source)}`;
  return 'anonymous function';
}

function callName(call, source) {
  // describe.each([...])('name', ...): the table is left out of the name.
  const callee = ts.isCallExpression(call.expression)
    ? `${call.expression.expression.getText(source)}(…)`
    : call.expression.getText(source).replace(/\s+/g, '');
  const first = call.arguments[0];
  if (first && (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first))) {
    return `${callee}(${JSON.stringify(first.text)})`;
  }
  return callee;
}

// --- Go, through go/ast (size-scan.d/go-funcs.go) ---

function goFunctions(paths) {
  const output = execFileSync('go', ['run', join(here, 'go-funcs.go')], {
    cwd: root,
    input: paths.join('\n') + '\n',
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, GOFLAGS: '-mod=mod', GO111MODULE: 'off' },
  });
  return output
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [path, start, end, name] = line.split('\t');
      return { path, start: Number(start), end: Number(end), name };
    });
}

// --- C: comments, strings and preprocessor lines blanked, then braces matched ---

function cFunctions(path, text) {
  const code = blankC(text);
  const found = [];
  let depth = 0;
  let open = null;
  for (let i = 0; i < code.length; i += 1) {
    const ch = code[i];
    if (ch === '{') {
      if (depth === 0) open = { index: i, name: cHeader(code, i) };
      depth += 1;
    } else if (ch === '}') {
      depth -= 1;
      if (depth === 0 && open?.name) {
        found.push({
          path,
          start: lineAt(code, cHeaderStart(code, open.index)),
          end: lineAt(code, i),
          name: open.name,
        });
      }
      if (depth < 0) depth = 0;
    }
  }
  return found;
}

// The name of the function whose body opens at `brace`, or null when the brace opens something else
// (struct, enum, initializer).
function cHeader(code, brace) {
  const before = code.slice(Math.max(0, brace - 2000), brace).trimEnd();
  if (!before.endsWith(')')) return null;
  let depth = 0;
  let i = before.length - 1;
  for (; i >= 0; i -= 1) {
    if (before[i] === ')') depth += 1;
    else if (before[i] === '(') {
      depth -= 1;
      if (depth === 0) break;
    }
  }
  const name = /([A-Za-z_]\w*)\s*$/.exec(before.slice(0, i));
  if (!name || ['if', 'for', 'while', 'switch', 'return', 'sizeof'].includes(name[1])) return null;
  if (/=\s*$/.test(before.slice(0, i - name[0].length))) return null;
  return name[1];
}

// Where the function's declaration starts: the first character after the `;` or `}` before its body.
function cHeaderStart(code, brace) {
  const header = code.slice(0, brace);
  const after = Math.max(header.lastIndexOf(';'), header.lastIndexOf('}')) + 1;
  const next = header.slice(after).search(/\S/);
  return next < 0 ? brace : after + next;
}

function blankC(text) {
  let out = '';
  let i = 0;
  const blank = (s) => s.replace(/[^\n]/g, ' ');
  while (i < text.length) {
    const rest = text.slice(i, i + 2);
    let end;
    if (rest === '/*') end = text.indexOf('*/', i + 2) + 2 || text.length;
    else if (rest === '//') end = nextLineEnd(text, i);
    else if (text[i] === '"' || text[i] === "'") end = quotedEnd(text, i);
    else if (text[i] === '#' && /(^|\n)[ \t]*$/.test(text.slice(Math.max(0, i - 200), i)))
      end = directiveEnd(text, i);
    if (end === undefined) {
      out += text[i];
      i += 1;
    } else {
      if (end <= i) end = text.length;
      out += blank(text.slice(i, end));
      i = end;
    }
  }
  return out;
}

function nextLineEnd(text, i) {
  const end = text.indexOf('\n', i);
  return end < 0 ? text.length : end;
}

function directiveEnd(text, i) {
  let end = nextLineEnd(text, i);
  while (end < text.length && text[end - 1] === '\\') end = nextLineEnd(text, end + 1);
  return end;
}

function quotedEnd(text, i) {
  const quote = text[i];
  let j = i + 1;
  while (j < text.length && text[j] !== quote && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
  return j + 1;
}

function lineAt(code, index) {
  let line = 1;
  for (let i = code.indexOf('\n'); i >= 0 && i < index; i = code.indexOf('\n', i + 1)) line += 1;
  return line;
}

// --- Output ---

function print(findings, { maxFile, maxFunction, json, scanned }) {
  if (json) {
    console.log(JSON.stringify({ maxFile, maxFunction, scanned, findings }, null, 2));
    return;
  }
  const order = (a, b) => b.lines - a.lines || a.path.localeCompare(b.path);
  for (const test of [false, true]) {
    const title = test ? 'Test code' : 'Production code';
    const files = findings.filter((f) => f.test === test && f.kind === 'file').sort(order);
    const fns = findings.filter((f) => f.test === test && f.kind === 'function').sort(order);
    console.log(
      `${title}: ${files.length} file(s) over ${maxFile} lines, ${fns.length} function(s) over ${maxFunction} lines`,
    );
    for (const f of files) console.log(`  ${String(f.lines).padStart(5)}  ${f.path}`);
    for (const f of fns)
      console.log(`  ${String(f.lines).padStart(5)}  ${f.path}:${f.line}  ${f.name}`);
  }
  console.log(`${scanned} files scanned${findings.length ? '' : ': nothing over'}.`);
}

process.exitCode = main();
