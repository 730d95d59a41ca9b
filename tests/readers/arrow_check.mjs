// SPDX-License-Identifier: MIT
// arrow_check.mjs - read an Arrow IPC stream with Apache Arrow's own
// JavaScript reader (the apache-arrow package) and check every schema
// field, batch, value and null against what examples/arrow_stream.c means
// to write (its header comment).
//
// Usage: node arrow_check.mjs FILE ROWS BATCH [-e] [-n]
//   -e: every string empty; -n: every value null (arrow_stream's flags).
// Prints one line and exits 0 when everything matches, else names the
// first difference and exits 1.
import { readFileSync } from 'node:fs';
import { MessageReader, RecordBatchReader, tableFromIPC, Type } from 'apache-arrow';

const [file, rowsArg, batchArg, ...flags] = process.argv.slice(2);
const rows = Number(rowsArg), batch = Number(batchArg);
const emptyStrings = flags.includes('-e'), allNull = flags.includes('-n');
const bytes = readFileSync(file);

function fail(msg) {
    console.error(`arrow_check: ${file}: ${msg}`);
    process.exit(1);
}

const wantFields = [['i', Type.Int, 32], ['l', Type.Int, 64], ['f', Type.Float, 64],
                    ['s', Type.Utf8, 0]];
function checkSchema(schema) {
    if (schema.fields.length !== 4) fail(`${schema.fields.length} fields, not 4`);
    schema.fields.forEach((f, k) => {
        const [name, typeId, bits] = wantFields[k];
        if (f.name !== name) fail(`field ${k} is "${f.name}", not "${name}"`);
        if (f.typeId !== typeId) fail(`field ${name}: type ${f.type}, not type id ${typeId}`);
        if (typeId === Type.Int && (f.type.bitWidth !== bits || !f.type.isSigned))
            fail(`field ${name}: ${f.type}, not a signed ${bits}-bit int`);
        if (typeId === Type.Float && f.type.precision !== 2) fail(`field ${name}: ${f.type}`);
        if (!f.nullable) fail(`field ${name} is not nullable`);
    });
}

// The value each column should hold at `row`, null where the row is null.
function want(row) {
    if (allNull || row % 7 === 3) return [null, null, null, null];
    return [row, BigInt(row) * 1000000007n, row / 4, emptyStrings ? '' : `row ${row}`];
}

function checkRows(batchOrTable, first, what) {
    const cols = ['i', 'l', 'f', 's'].map((n) => batchOrTable.getChild(n));
    for (let k = 0; k < batchOrTable.numRows; k++) {
        const w = want(first + k);
        for (let c = 0; c < 4; c++) {
            const got = cols[c].get(k);
            if (got !== w[c]) fail(`${what}: row ${first + k}, column ${'ilfs'[c]}: ` +
                                   `${String(got)}, expected ${String(w[c])}`);
            if (cols[c].isValid(k) !== (w[c] !== null)) fail(`${what}: row ${first + k}: validity`);
        }
    }
}

// The framing: each message at a multiple of 8 (marker, metadata length,
// metadata padded so the body starts at a multiple of 8), MetadataVersion
// V5, bodies and buffers at multiples of 8, then the end-of-stream marker.
const messages = new MessageReader(bytes);
let pos = 0;
for (let m; (m = messages.readMessage()) !== null; ) {
    const len = bytes.readInt32LE(pos + 4);
    if (bytes.readUInt32LE(pos) !== 0xFFFFFFFF) fail(`no continuation marker at ${pos}`);
    if (pos % 8 || (pos + 8 + len) % 8) fail(`message at ${pos}: body not 8-aligned`);
    if (m.version !== 4) fail(`message at ${pos}: metadata version ${m.version}, not V5`);
    if (m.bodyLength % 8) fail(`message at ${pos}: body length ${m.bodyLength}`);
    if (m.isRecordBatch())
        for (const b of m.header().buffers)
            if (b.offset % 8) fail(`message at ${pos}: a buffer at ${b.offset}`);
    messages.readMessageBody(m.bodyLength);
    pos += 8 + len + m.bodyLength;
}
if (pos + 8 !== bytes.length || bytes.readUInt32LE(pos) !== 0xFFFFFFFF ||
    bytes.readUInt32LE(pos + 4) !== 0)
    fail(`no end-of-stream marker at ${pos} (${bytes.length} bytes)`);

// Batch by batch, through the stream reader.
const reader = RecordBatchReader.from(bytes);
reader.open();
checkSchema(reader.schema);
let seen = 0, batches = 0;
for (const b of reader) {
    const n = Math.min(batch, rows - seen);
    if (b.numRows !== n) fail(`batch ${batches} has ${b.numRows} rows, expected ${n}`);
    const nulls = allNull ? n : Array.from({ length: n }, (_, k) => (seen + k) % 7 === 3)
        .filter(Boolean).length;
    for (const name of ['i', 'l', 'f', 's'])
        if (b.getChild(name).nullCount !== nulls) fail(`batch ${batches}, ${name}: null count`);
    checkRows(b, seen, `batch ${batches}`);
    seen += n;
    batches++;
}
if (seen !== rows) fail(`${seen} rows in the stream, expected ${rows}`);
if (batches !== Math.ceil(rows / batch)) fail(`${batches} batches`);

// The whole table at once.
const table = tableFromIPC(bytes);
checkSchema(table.schema);
if (table.numRows !== rows) fail(`the table has ${table.numRows} rows`);
checkRows(table, 0, 'table');
console.log(`arrow_check: ${file}: ${rows} rows in ${batches} batches, schema, values and ` +
            `nulls as meant (apache-arrow's RecordBatchReader and tableFromIPC)`);
