/*
 * Where a cell's stack frames point in the cell as it was written: esbuild's source map of the
 * TypeScript it stripped, decoded here (Node applies no source map to a `vm.Script`). Pure:
 * unit-tested beside.
 */

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** One segment of a source map: generated column → source line and column (all 0-based). */
type Segment = [generatedColumn: number, sourceLine: number, sourceColumn: number];

/** The values of one base64 VLQ segment. */
function decodeSegment(text: string): number[] {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = BASE64.indexOf(char);
    if (digit < 0) return values;
    value += (digit & 31) << shift;
    if ((digit & 32) !== 0) {
      shift += 5;
      continue;
    }
    values.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return values;
}

/** A source map's `mappings`, per generated line: its segments that name a source position. */
export function decodeMappings(mappings: string): Segment[][] {
  const lines: Segment[][] = [];
  let sourceLine = 0;
  let sourceColumn = 0;
  for (const line of mappings.split(';')) {
    const segments: Segment[] = [];
    let column = 0;
    for (const text of line.split(',')) {
      if (text === '') continue;
      const [dColumn = 0, , dLine, dSourceColumn] = decodeSegment(text);
      column += dColumn;
      if (dLine === undefined || dSourceColumn === undefined) continue;
      sourceLine += dLine;
      sourceColumn += dSourceColumn;
      segments.push([column, sourceLine, sourceColumn]);
    }
    lines.push(segments);
  }
  return lines;
}

/** Where generated line:column (1-based) was in the source (1-based), if the map says. */
function original(lines: Segment[][], line: number, column: number): [number, number] | undefined {
  const segments = lines[line - 1] ?? [];
  let found: Segment | undefined;
  for (const segment of segments) if (segment[0] <= column - 1) found = segment;
  found ??= segments[0];
  return found === undefined ? undefined : [found[1] + 1, found[2] + 1];
}

/** The stack with every frame in a cell (`<cell-N>:line:column`) pointing at the cell's source. */
export function sourceStack(stack: string, mappings: string): string {
  const lines = decodeMappings(mappings);
  return stack.replace(/(<cell-\d+>):(\d+):(\d+)/g, (whole, cell: string, line, column) => {
    const at = original(lines, Number(line), Number(column));
    return at === undefined ? whole : `${cell}:${at[0]}:${at[1]}`;
  });
}
