import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { Command } from 'commander';
import { action, UsageError, type Context } from '../context';
import { examples, jsonOption, remotePath } from '../options';
import { outputOf, type Output } from '../output';

type Remote = { sessionId: string; path: string };

const mb = (bytes: number) => (bytes / 1_000_000).toFixed(1);

/** `sandbox cp SRC DST`: a file to or from a session. */
export function cpCommand(ctx: Context): Command {
  return new Command('cp')
    .summary('copy a file to or from a session')
    .description(
      'Copy a file to or from a session: SID:PATH (relative to /workspace) on one side, a ' +
        'local path or - (standard input or output) on the other.',
    )
    .argument('<source>', 'SID:PATH, a local file, or - (standard input)')
    .argument('<target>', 'SID:PATH, a local file, or - (standard output)')
    .addOption(jsonOption('{path, size} of the file written'))
    .addHelpText(
      'after',
      examples(
        'sandbox cp ./data.csv ses_…:input/data.csv',
        'sandbox cp ses_…:out/report.json - | jq .',
        "echo 'hello' | sandbox cp - ses_…:note.txt",
      ),
    )
    .action(
      action(ctx, async (source: string, target: string, flags: { json?: boolean }) => {
        const from = remotePath(source);
        const to = remotePath(target);
        const out = outputOf(ctx.io, flags.json);
        if (to !== undefined && from === undefined) await upload(ctx, source, to, out);
        else if (from !== undefined && to === undefined) await download(ctx, from, target, out);
        else throw new UsageError('cp copies between a session (SID:PATH) and a local path or -');
        return 0;
      }),
    );
}

async function upload(ctx: Context, source: string, to: Remote, out: Output): Promise<void> {
  const sandbox = await ctx.api().connect(to.sessionId);
  const size = source === '-' ? undefined : (await stat(source)).size;
  const input = source === '-' ? ctx.io.stdin : createReadStream(source);
  const { stderr } = ctx.io;
  const showProgress = stderr.isTTY === true && (size ?? 0) > 1_000_000;
  const onProgress = (sent: number) =>
    stderr.write(`\ruploading ${mb(sent)} / ${mb(size ?? 0)} MB`);
  const written = await sandbox.files.write(
    to.path,
    input as AsyncIterable<Uint8Array>,
    showProgress ? { onProgress } : {},
  );
  if (showProgress) stderr.write('\n');
  out.print(written, () => `${written.path}: ${written.size} bytes`);
}

async function download(ctx: Context, from: Remote, target: string, out: Output): Promise<void> {
  const sandbox = await ctx.api().connect(from.sessionId);
  const body = await sandbox.files.readStream(from.path);
  const toStdout = target === '-';
  const output: Writable = toStdout
    ? (ctx.io.stdout as unknown as Writable)
    : createWriteStream(target);
  let size = 0;
  async function* counted(chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) {
      size += chunk.length;
      yield chunk;
    }
  }
  const source = Readable.fromWeb(body as NodeReadableStream<Uint8Array>);
  await pipeline(source, counted, output, { end: !toStdout });
  // On stdout the file is the output; else what was written, as for an upload.
  if (!toStdout) out.print({ path: target, size }, () => `${target}: ${size} bytes`);
}
