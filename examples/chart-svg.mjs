// A chart drawn in the sandbox and shown as a rich result: a code context (state kept between
// cells, as a notebook's kernel) imports Vega and Vega-Lite (installed into the session on
// first use), and a cell renders a bar chart to SVG (Vega's `toSVG()`, no canvas needed) and
// hands it back with `display({ 'image/svg+xml': svg })`. The SVG arrives as its own streamed
// event (`onResult`) before the cell ends, and is written here to chart.svg (or the path given).
//
//   SANDBOX_API_URL=… SANDBOX_API_KEY=… node examples/chart-svg.mjs [out.svg]
import { writeFileSync } from 'node:fs';
import { Sandbox } from '@sandbox/sdk';

const out = process.argv[2] ?? 'chart.svg';

/** A cell's error, as the model (or a person) would read it: its stack, else name and message. */
function failed(result) {
  return result.error === undefined ? undefined : (result.error.stack ?? result.error.message);
}

const sandbox = await Sandbox.create({ metadata: { example: 'chart-svg' } });
try {
  const context = await sandbox.createContext(); // TypeScript, in /workspace

  // 1. Imports stay for the next cells; the packages are installed on first use.
  const imported = await sandbox.runCode(
    "import * as vega from 'vega';\nimport * as vl from 'vega-lite';\nvega.version",
    { context, timeoutMs: 180_000 },
  );
  if (failed(imported) !== undefined) throw new Error(failed(imported));
  console.log(`vega ${JSON.parse(imported.results[0]['application/json'])} imported`);

  // 2. Data, typed, kept in the context.
  await sandbox.runCode(
    `type Row = { language: string; cells: number };
     const rows: Row[] = [
       { language: 'TypeScript', cells: 28 }, { language: 'JavaScript', cells: 55 },
       { language: 'Python', cells: 43 }, { language: 'Go', cells: 91 }, { language: 'Rust', cells: 81 },
     ];`,
    { context },
  );

  // 3. The chart: Vega-Lite compiled to Vega, rendered headless to SVG, displayed.
  let svg = '';
  const drawn = await sandbox.runCode(
    `const spec: vl.TopLevelSpec = {
       data: { values: rows },
       mark: 'bar',
       encoding: {
         x: { field: 'language', type: 'nominal', sort: '-y' },
         y: { field: 'cells', type: 'quantitative' },
       },
     };
     const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
     const svg = await view.toSVG();
     display({ 'image/svg+xml': svg });
     ({ bars: rows.length, bytes: svg.length })`,
    {
      context,
      timeoutMs: 60_000,
      onResult: (result) => {
        if (result['image/svg+xml'] !== undefined) svg = String(result['image/svg+xml']);
      },
    },
  );
  if (failed(drawn) !== undefined) throw new Error(failed(drawn));
  const main = drawn.results.find((result) => result.isMain);
  writeFileSync(out, svg);
  console.log(`chart: ${main['text/plain']}`);
  console.log(
    `wrote ${out}: ${svg.startsWith('<svg') ? 'an SVG' : 'not an SVG'} of ${svg.length} bytes`,
  );
} finally {
  await sandbox.delete();
}
