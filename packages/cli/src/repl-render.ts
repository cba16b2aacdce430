import { homedir } from 'node:os';
import { join } from 'node:path';
import { transformSync, type TransformFailure } from 'esbuild';
import type { CellError, CellResult, ExecutionResult } from '@sandbox/sdk';

/*
 * What `sandbox repl` shows of a cell, and how it reads input: pure, unit-tested beside.
 */

/**
 * Whether a cell's error says only that its input stopped short (an open brace, bracket or
 * parenthesis, a trailing operator, an open template literal): the REPL then reads another
 * line. The cell's own compiler says so, esbuild for TypeScript ("Unexpected end of file",
 * `Expected "}" but found end of file`), V8 for JavaScript ("Unexpected end of input"), so
 * TypeScript is judged by the same parser that runs it.
 */
export function isIncomplete(result: Pick<ExecutionResult, 'error'>): boolean {
  const error = result.error;
  if (error?.name !== 'SyntaxError') return false;
  return /\bend of (?:file|input)\b|Unterminated template/i.test(error.message);
}

/**
 * Whether an entry is cut short, judged here at once (so that the REPL asks for the next line
 * before it reads it, a paste of many lines too) by esbuild, the parser the service strips a
 * TypeScript cell with: its end of file came too soon, or it ends inside a template literal.
 * Where esbuild cannot tell, the cell's own answer does (`isIncomplete`).
 */
export function entryIncomplete(code: string, language: 'typescript' | 'javascript'): boolean {
  const loader = language === 'typescript' ? 'ts' : 'js';
  const failure = (source: string): string | undefined => {
    try {
      transformSync(source, { loader });
      return undefined;
    } catch (err) {
      return (err as Partial<TransformFailure>).errors?.[0]?.text ?? '';
    }
  };
  const text = failure(code);
  if (text === undefined) return false;
  if (/\bend of file\b/.test(text)) return true;
  // esbuild calls an open template literal an unterminated string: a backtick closes it.
  return (
    /^Unterminated string/.test(text) && !/^Unterminated string/.test(failure(`${code}\``) ?? '')
  );
}

/** Bytes as people read them: `532 B`, `1.2 kB`, `3.4 MB`. */
function sizeText(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** The size of one part of a MIME bundle: base64 images decoded, text as UTF-8. */
function partSize(type: string, part: string): number {
  if (type.startsWith('image/') && type !== 'image/svg+xml') {
    const padding = part.endsWith('==') ? 2 : part.endsWith('=') ? 1 : 0;
    return Math.max(0, Math.floor((part.length * 3) / 4) - padding);
  }
  return Buffer.byteLength(part);
}

/** The types a terminal shows as text: the rest are named, with their size. */
const SHOWN_AS_TEXT = new Set(['text/plain', 'application/json', 'isMain']);

/**
 * The lines a cell's value prints: its `text/plain` (util.inspect of the value), and a line
 * naming each part a terminal cannot show (`text/html`, `image/svg+xml`, `image/png`, …) with
 * its size. A bundle's stand-in text (`[image/svg+xml]`, made when `display` got no
 * `text/plain`) is left out, its parts being named already.
 */
export function resultLines(result: CellResult): string[] {
  const rich = Object.keys(result).filter((type) => !SHOWN_AS_TEXT.has(type));
  const lines = rich.map((type) => {
    const part = String(result[type]);
    return `[${type}, ${sizeText(partSize(type, part))}: not shown in a terminal]`;
  });
  const text = result['text/plain'];
  if (rich.length === 0 || text !== `[${rich.join(', ')}]`) lines.push(text);
  return lines;
}

/** A cell's error as it prints: its stack (which begins with name and message), or those. */
export function errorText(error: CellError): string {
  const head = `${error.name}: ${error.message}`;
  return error.stack.includes(error.message) ? error.stack : `${head}\n${error.stack}`;
}

/**
 * Where the REPL keeps its history: $SANDBOX_REPL_HISTORY (empty: nowhere), else
 * `repl_history` in the CLI's configuration directory ($XDG_CONFIG_HOME/sandbox, by default
 * ~/.config/sandbox).
 */
export function historyPath(env: Record<string, string | undefined>): string | undefined {
  const chosen = env.SANDBOX_REPL_HISTORY;
  if (chosen !== undefined) return chosen.trim() === '' ? undefined : chosen;
  const config =
    env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== ''
      ? env.XDG_CONFIG_HOME
      : join(env.HOME ?? homedir(), '.config');
  return join(config, 'sandbox', 'repl_history');
}

/** ANSI styles, or none (not a terminal, or NO_COLOR). */
export interface Styles {
  dim(text: string): string;
  red(text: string): string;
}

export function stylesFor(tty: boolean, env: Record<string, string | undefined>): Styles {
  const on = tty && (env.NO_COLOR === undefined || env.NO_COLOR === '');
  const wrap = (code: number) => (text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);
  return { dim: wrap(2), red: wrap(31) };
}
