// `dsh-sandbox mcp` driven by the official MCP TypeScript SDK's client over stdio: the tools
// listed with their schemas, each tool inside and outside the workspace (every denied change
// checked on disk), the bash tool's markers, escalation through elicitation (accept, decline,
// a client without elicitation), cancellation of a running command (its process gone),
// progress, sessions resolved per call, the policy told in the instructions, where commands
// start (cwd), and the protocol's own errors, a server that cannot serve included.
//
// Run by meson (tests/meson.build) as `node --test-reporter=tap mcp.test.mjs`, with
// DSH_SANDBOX_BIN naming the built program and DSH_TEST_SCRATCH a scratch directory.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const program = process.env.DSH_SANDBOX_BIN;
const scratchRoot = process.env.DSH_TEST_SCRATCH ?? '/var/tmp/dsh-sandbox-tests';
assert.ok(program, 'DSH_SANDBOX_BIN must name the dsh-sandbox program');

let scratch, workspace, outside, environment;

before(() => {
  fs.mkdirSync(scratchRoot, { recursive: true });
  scratch = fs.mkdtempSync(path.join(scratchRoot, 'mcp-'));
  workspace = path.join(scratch, 'workspace');
  outside = path.join(scratch, 'outside');
  for (const directory of [workspace, outside, 'config', 'state', 'cache'].map((d) => path.resolve(scratch, d)))
    fs.mkdirSync(directory, { recursive: true });
  // The host's own configuration and sessions never leak into the test.
  environment = { ...process.env };
  delete environment.DSH_SANDBOX_CONFIG;
  environment.XDG_CONFIG_HOME = path.join(scratch, 'config');
  environment.XDG_CACHE_HOME = path.join(scratch, 'cache');
  environment.DSH_SANDBOX_STATE_DIR = path.join(scratch, 'state');
});

after(() => {
  fs.rmSync(scratch, { recursive: true, force: true });
});

// A connected SDK client of `dsh-sandbox mcp ARGS`; `answer` set: it declares elicitation and
// answers every elicitation with that action, recording the requests in `elicitations`.
// `env`, `cwd` and `stderr` are the server process's.
async function connect(args, { answer, cwd = workspace, env = environment, stderr = 'inherit' } = {}) {
  const elicitations = [];
  const errors = [];
  const client = new Client({ name: 'dsh-sandbox-tests', version: '1.0.0' },
    { capabilities: answer ? { elicitation: {} } : {} });
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitations.push(request.params);
      return { action: answer };
    });
  }
  client.onerror = (error) => errors.push(error);
  const transport = new StdioClientTransport({
    command: program, args: ['mcp', ...args], env, cwd, stderr,
  });
  await client.connect(transport);
  return { client, elicitations, errors, close: () => client.close() };
}

// Runs `fn` with a client of `dsh-sandbox mcp ARGS`, closed afterwards.
async function withServer(args, fn, options) {
  const server = await connect(args, options);
  try {
    return await fn(server.client, server);
  } finally {
    await server.close();
  }
}

const text = (result) => result.content.map((item) => item.text).join('');
const call = (client, name, args) => client.callTool({ name, arguments: args });
const fileDenial = (shown, mode) => `FS_SANDBOX_DENIED: cannot write "${shown}": file access denied under ${mode} mode`;
const bashDenial = (mode) => `[sandbox: file access denied under ${mode} mode]`;
const escalationMarker = '[sandbox: escalation available — retry this exact command once with sandbox_permissions';

function readIfExists(file) {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
}

// ------------------------------------------------------------------------------ the protocol --

// A raw JSON-RPC session over the program's stdio, for what the SDK client never sends.
async function rawExchange(messages) {
  const child = spawn(program, ['mcp', '--mode', 'read-only'], { env: environment, cwd: workspace,
    stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout });
  const answers = new Map();
  const done = new Promise((resolve) => lines.on('close', resolve));
  lines.on('line', (line) => {
    const message = JSON.parse(line);
    answers.set(message.id, message);
  });
  for (const message of messages)
    child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  child.stdin.end();
  await done;
  return answers;
}

test('initialize negotiates the revision; unknown methods and bad params are protocol errors', async () => {
  const initialize = (id, protocolVersion, capabilities = {}) => ({ jsonrpc: '2.0', id, method: 'initialize',
    params: { protocolVersion, capabilities, clientInfo: { name: 'raw', version: '1' } } });
  const answers = await rawExchange([
    initialize(1, '2024-11-05'),
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'ping' },
    { jsonrpc: '2.0', id: 3, method: 'resources/list' },
    { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { arguments: {} } },
    { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
    // Up to 2025-06-18, arguments the inputSchema refuses are a protocol error.
    { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'bash', arguments: { command: 'true', timeout: 5 } } },
    { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'bash', arguments: { command: 7 } } },
    { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'read_file', arguments: [] } },
    'this is not JSON',
  ]);
  assert.equal(answers.get(1).result.protocolVersion, '2024-11-05');
  assert.deepEqual(answers.get(1).result.capabilities, { tools: { listChanged: false } });
  assert.equal(answers.get(1).result.serverInfo.name, 'dsh-sandbox');
  assert.deepEqual(answers.get(2).result, {});
  assert.equal(answers.get(3).error.code, -32601);
  assert.equal(answers.get(4).error.code, -32602);
  assert.match(answers.get(4).error.message, /name/);
  assert.equal(answers.get(5).error.code, -32602);
  assert.match(answers.get(5).error.message, /unknown tool "no_such_tool"/);
  assert.equal(answers.get(6).error.code, -32602);
  assert.match(answers.get(6).error.message, /arguments\.timeout: unknown argument/);
  assert.equal(answers.get(7).error.code, -32602);
  assert.match(answers.get(7).error.message, /arguments\.command: expected a string/);
  assert.equal(answers.get(8).error.code, -32602);
  assert.equal(answers.get(null).error.code, -32700);
  // A revision the server does not speak: it answers its newest, and the client decides.  (A
  // connection of its own: requests run concurrently, and this one would change the revision the
  // argument errors above depend on.)
  const newest = await rawExchange([initialize(9, '1999-01-01')]);
  assert.equal(newest.get(9).result.protocolVersion, '2025-11-25');
});

test('the SDK client negotiates its newest revision; invalid arguments come back as a tool error', async () => {
  await withServer(['--mode', 'read-only'], async (client) => {
    assert.equal(client.getServerVersion().name, 'dsh-sandbox');
    assert.ok(client.getServerCapabilities().tools);
    const result = await call(client, 'bash', { command: 'true', timeout: 5 });
    assert.equal(result.isError, true);
    assert.match(text(result), /invalid arguments: timeout: unknown argument/);
    const missing = await call(client, 'write_file', { path: 'x' });
    assert.equal(missing.isError, true);
    assert.match(text(missing), /invalid arguments: content: missing/);
    assert.equal(readIfExists(path.join(workspace, 'x')), null);
  });
});

test('tools/list offers the seven tools, each with an input schema and a usable description', async () => {
  await withServer(['--mode', 'workspace-write'], async (client) => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    assert.deepEqual(Object.keys(byName).sort(),
      ['bash', 'create_directory', 'edit_file', 'move', 'read_file', 'remove', 'write_file']);
    const expected = {
      bash: [['command'], ['additional_hosts', 'additional_write', 'command', 'cwd', 'justification',
        'sandbox_permissions', 'timeout_ms']],
      read_file: [['path'], ['length', 'offset', 'path']],
      write_file: [['path', 'content'], ['content', 'path']],
      edit_file: [['path', 'old_string', 'new_string'], ['new_string', 'old_string', 'path', 'replace_all']],
      create_directory: [['path'], ['path', 'recursive']],
      remove: [['path'], ['path', 'recursive']],
      move: [['source', 'destination'], ['destination', 'source']],
    };
    for (const [name, [required, properties]] of Object.entries(expected)) {
      const schema = byName[name].inputSchema;
      assert.equal(schema.type, 'object', name);
      assert.deepEqual(schema.required, required, name);
      assert.deepEqual(Object.keys(schema.properties).sort(), properties, name);
      assert.equal(schema.additionalProperties, false, name);
      assert.ok(byName[name].description.length > 80, name);
    }
    const bash = byName.bash;
    assert.equal(bash.inputSchema.properties.timeout_ms.type, 'integer');
    assert.deepEqual(bash.inputSchema.properties.sandbox_permissions.enum,
      ['read-only', 'workspace-write', 'danger-full-access']);
    assert.match(bash.description, /\[sandbox: file access denied under <mode> mode\]/);
    assert.match(bash.description, /sandbox_permissions/);
    assert.match(bash.description, /justification/);
    assert.equal(bash.outputSchema.type, 'object');
    assert.match(byName.write_file.description, /FS_SANDBOX_DENIED/);
    assert.equal(byName.read_file.annotations.readOnlyHint, true);
  });
});

// The backends this host can confine with (the probe's verdict), as `dsh-sandbox probe --json` reports them.
function usableBackends() {
  const report = JSON.parse(execFileSync(program, ['probe', '--json'], { env: environment, cwd: workspace, encoding: 'utf8' }));
  return report.backends.filter((backend) => backend.usable).map((backend) => backend.name);
}

// What the server says /tmp is, per backend and mode (docs/mcp.md): the tests name each case.
const temporaryArea = {
  'bwrap read-only': '/tmp is an empty private scratch area for each call',
  'bwrap workspace-write': '/tmp is private to this session and kept across its calls',
  'landlock read-only': "/tmp is the host's /tmp, not writable",
  'landlock workspace-write': "/tmp is the host's /tmp, writable",
};

test('the instructions and the bash tool name the mode, the root, the writable roots, the backend and /tmp', async () => {
  const root = fs.realpathSync(workspace);
  const extra = fs.realpathSync(outside);
  const backends = usableBackends();
  assert.ok(backends.length > 0, 'no usable backend: the MCP server could not serve at all');
  for (const backend of backends) {
    for (const mode of ['read-only', 'workspace-write']) {
      await withServer(['--mode', mode, '--backend', backend, '--allow-write', extra], async (client) => {
        const told = client.getInstructions();
        const { tools } = await client.listTools();
        const bash = tools.find((tool) => tool.name === 'bash').description;
        for (const shown of [told, bash]) {
          assert.ok(shown.includes(`mode "${mode}"`), shown);
          assert.ok(shown.includes(`workspace root "${root}"`), shown);
          assert.ok(shown.includes(`extra writable roots: "${extra}"`), shown);
          assert.ok(shown.includes(`sandbox backend "${backend}"`), shown);
          assert.ok(shown.includes(temporaryArea[`${backend} ${mode}`]), shown);
          assert.ok(shown.includes('TMPDIR points there'), shown);
        }
        assert.ok(!bash.includes("server's working directory"), bash);
      });
    }
  }
  await withServer(['--mode', 'danger-full-access'], async (client) => {
    const told = client.getInstructions();
    assert.ok(told.includes('mode "danger-full-access"') && told.includes('extra writable roots: none'), told);
    assert.ok(told.includes('sandbox backend "none"'), told);
  });
});

test('the bash tool starts in the root, takes cwd relative to it, and refuses a bad one without running', async () => {
  const root = fs.realpathSync(workspace);
  fs.mkdirSync(path.join(workspace, 'sub'), { recursive: true });
  const marker = path.join(workspace, 'cwd-ran');
  // Started elsewhere: the command starts in the root, not the server's own cwd.
  await withServer(['--mode', 'workspace-write', '--root', root], async (client) => {
    const pwd = async (args) => text(await call(client, 'bash', { command: 'pwd -P', ...args })).split('\n')[0];
    assert.equal(await pwd({}), root);
    assert.equal(await pwd({ cwd: 'sub' }), path.join(root, 'sub'));
    assert.equal(await pwd({ cwd: fs.realpathSync(outside) }), fs.realpathSync(outside));
    const refused = await call(client, 'bash', { command: `touch '${marker}'`, cwd: 'missing' });
    assert.equal(refused.isError, true);
    assert.ok(text(refused).includes(`cwd "${root}/missing" does not exist`), text(refused));
    assert.equal(fs.existsSync(marker), false);
    // Not a grant: a relative write from a cwd outside the root is denied, and absent on disk.
    const escaped = await call(client, 'bash', { command: 'echo x > relative.txt', cwd: fs.realpathSync(outside) });
    assert.equal(escaped.isError, true);
    assert.ok(text(escaped).includes(bashDenial('workspace-write')), text(escaped));
    assert.equal(fs.existsSync(path.join(outside, 'relative.txt')), false);
  }, { cwd: scratch });
  fs.rmSync(path.join(workspace, 'sub'), { recursive: true });
});

// ------------------------------------------------------------------------------- file tools --

test('read_file is bounded: a sparse 20 GiB file is refused with FS_TOO_LARGE, and read in parts', async () => {
  await withServer(['--mode', 'workspace-write'], async (client) => {
    const sparse = path.join(workspace, 'sparse.bin');
    fs.writeFileSync(sparse, '');
    fs.truncateSync(sparse, 20 * 1024 ** 3);
    let result = await call(client, 'read_file', { path: 'sparse.bin' });
    assert.equal(result.isError, true);
    assert.match(text(result), /FS_TOO_LARGE/);
    assert.match(text(result), /read a range/);
    // A part that starts and ends inside two-byte characters reads as the whole characters within.
    fs.writeFileSync(path.join(workspace, 'accents.txt'), 'caf\u00e9 cr\u00e8me');
    result = await call(client, 'read_file', { path: 'accents.txt', offset: 4, length: 5 });
    assert.equal(result.isError, false, text(result));
    assert.equal(text(result), ' cr');
    fs.unlinkSync(sparse);
  });
});

test('file tools work inside the workspace', async () => {
  await withServer(['--mode', 'workspace-write'], async (client) => {
    let result = await call(client, 'write_file', { path: 'notes/a.txt', content: 'one two one\n' });
    assert.equal(result.isError, false, text(result));
    assert.equal(readIfExists(path.join(workspace, 'notes/a.txt')), 'one two one\n');
    assert.equal(result.structuredContent.operation, 'write');
    assert.equal(result.structuredContent.created, true);

    result = await call(client, 'read_file', { path: path.join(workspace, 'notes/a.txt') });
    assert.equal(result.isError, false);
    assert.equal(text(result), 'one two one\n');
    result = await call(client, 'read_file', { path: 'notes/a.txt', offset: 4, length: 3 });
    assert.equal(result.isError, false, text(result));
    assert.equal(text(result), 'two');

    result = await call(client, 'edit_file', { path: 'notes/a.txt', old_string: 'one', new_string: '1' });
    assert.equal(result.isError, true);
    assert.match(text(result), /FS_TEXT_NOT_UNIQUE/);
    result = await call(client, 'edit_file', { path: 'notes/a.txt', old_string: 'one', new_string: '1',
      replace_all: true });
    assert.equal(result.isError, false, text(result));
    assert.equal(readIfExists(path.join(workspace, 'notes/a.txt')), '1 two 1\n');

    result = await call(client, 'create_directory', { path: 'deep/er/est', recursive: true });
    assert.equal(result.isError, false, text(result));
    assert.ok(fs.statSync(path.join(workspace, 'deep/er/est')).isDirectory());

    result = await call(client, 'move', { source: 'notes/a.txt', destination: 'deep/b.txt' });
    assert.equal(result.isError, false, text(result));
    assert.equal(readIfExists(path.join(workspace, 'notes/a.txt')), null);
    assert.equal(readIfExists(path.join(workspace, 'deep/b.txt')), '1 two 1\n');

    result = await call(client, 'remove', { path: 'deep', recursive: true });
    assert.equal(result.isError, false, text(result));
    assert.equal(fs.existsSync(path.join(workspace, 'deep')), false);

    fs.writeFileSync(path.join(workspace, 'binary.bin'), Buffer.from([0x41, 0xff, 0x42]));
    result = await call(client, 'read_file', { path: 'binary.bin' });
    assert.equal(result.isError, true);
    assert.match(text(result), /cannot read "binary.bin": it is not UTF-8 text \(byte 0xff at offset 1\)/);
    fs.rmSync(path.join(workspace, 'binary.bin'));

    result = await call(client, 'read_file', { path: 'no/such/file' });
    assert.equal(result.isError, true);
    assert.match(text(result), /^FS_NOT_FOUND: cannot read "no\/such\/file"/);
  });
});

test('file tools outside the workspace are denied and change nothing on disk', async () => {
  const kept = path.join(outside, 'kept.txt');
  fs.writeFileSync(kept, 'original\n');
  await withServer(['--mode', 'workspace-write'], async (client) => {
    const denied = async (name, args, shown) => {
      const result = await call(client, name, args);
      assert.equal(result.isError, true, `${name}: ${text(result)}`);
      assert.ok(text(result).startsWith(fileDenial(shown, 'workspace-write')), text(result));
    };
    const fresh = path.join(outside, 'fresh.txt');
    await denied('write_file', { path: fresh, content: 'x' }, fresh);
    assert.equal(fs.existsSync(fresh), false);
    await denied('write_file', { path: kept, content: 'changed' }, kept);
    await denied('edit_file', { path: kept, old_string: 'original', new_string: 'changed' }, kept);
    await denied('create_directory', { path: path.join(outside, 'dir') }, path.join(outside, 'dir'));
    assert.equal(fs.existsSync(path.join(outside, 'dir')), false);
    await denied('remove', { path: kept }, kept);
    await denied('move', { source: kept, destination: path.join(workspace, 'stolen.txt') }, kept);
    assert.equal(fs.existsSync(path.join(workspace, 'stolen.txt')), false);
    // A symlink inside the workspace does not carry a write out of it.
    fs.symlinkSync(kept, path.join(workspace, 'link.txt'));
    await denied('write_file', { path: 'link.txt', content: 'through the link' }, 'link.txt');
    fs.unlinkSync(path.join(workspace, 'link.txt'));
    assert.equal(fs.readFileSync(kept, 'utf8'), 'original\n');
    // Reading is allowed everywhere.
    const read = await call(client, 'read_file', { path: kept });
    assert.equal(read.isError, false);
    assert.equal(text(read), 'original\n');
  });
});

test('the sandbox protects .git/hooks in the workspace from both file tools and commands', async () => {
  fs.mkdirSync(path.join(workspace, '.git/hooks'), { recursive: true });
  const hook = path.join(workspace, '.git/hooks/pre-commit');
  await withServer(['--mode', 'workspace-write'], async (client) => {
    const written = await call(client, 'write_file', { path: '.git/hooks/pre-commit', content: '#!/bin/sh\n' });
    assert.equal(written.isError, true);
    assert.match(text(written), /^FS_SANDBOX_DENIED: /);
    const ran = await call(client, 'bash', { command: `echo evil > ${hook}` });
    assert.equal(ran.isError, true);
    assert.ok(text(ran).includes(bashDenial('workspace-write')), text(ran));
  });
  assert.equal(fs.existsSync(hook), false);
  fs.rmSync(path.join(workspace, '.git'), { recursive: true });
});

test('commands run in the workspace root, where the file tools take relative paths from', async () => {
  // Started elsewhere, with a relative --root: the server moves to the root it resolved.
  await withServer(['--mode', 'workspace-write', '--root', path.basename(workspace)], async (client) => {
    const where = await call(client, 'bash', { command: 'pwd -P' });
    assert.equal(text(where).split('\n')[0], fs.realpathSync(workspace));
    await call(client, 'write_file', { path: 'relative.txt', content: 'same file\n' });
    const read = await call(client, 'bash', { command: 'cat relative.txt' });
    assert.equal(read.isError, false, text(read));
    assert.ok(text(read).startsWith('same file\n'));
  }, { cwd: scratch });
  assert.equal(readIfExists(path.join(workspace, 'relative.txt')), 'same file\n');
  fs.rmSync(path.join(workspace, 'relative.txt'));
});

// ---------------------------------------------------------------------------------- bash --

test('bash runs inside the workspace and is denied outside it, with the markers', async () => {
  const target = path.join(outside, 'bash-denied.txt');
  await withServer(['--mode', 'workspace-write'], async (client) => {
    let result = await call(client, 'bash', { command: 'echo made > made.txt; echo out; echo err >&2' });
    assert.equal(result.isError, false, text(result));
    assert.equal(readIfExists(path.join(workspace, 'made.txt')), 'made\n');
    assert.match(text(result), /^out\n\[stderr\]\nerr\n\[exit code 0\]\n$/);
    assert.equal(result.structuredContent.kind, 'completed');
    assert.equal(result.structuredContent.exitCode, 0);

    result = await call(client, 'bash', { command: `echo x > ${target}` });
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent.kind, 'denied');
    assert.ok(text(result).includes(bashDenial('workspace-write')), text(result));
    assert.ok(text(result).includes(escalationMarker), text(result));
    assert.deepEqual(result.structuredContent.markers, text(result).split('\n').filter((l) => l.startsWith('[sandbox:')));
    assert.equal(fs.existsSync(target), false);

    result = await call(client, 'bash', { command: 'echo failing; exit 3' });
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent.kind, 'completed');
    assert.equal(result.structuredContent.exitCode, 3);
    assert.ok(!text(result).includes('[sandbox:'));

    result = await call(client, 'bash', { command: 'sleep 30', timeout_ms: 200 });
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent.kind, 'timed-out');
  });
  fs.rmSync(path.join(workspace, 'made.txt'));
});

// ------------------------------------------------------------------------------ escalation --

const escalate = (client, file) => call(client, 'bash', {
  command: `echo granted > ${file}`,
  sandbox_permissions: 'workspace-write',
  justification: 'the test writes one file in the workspace',
});

test('an escalation accepted through elicitation runs that one call under the wider mode', async () => {
  const file = path.join(workspace, 'escalated.txt');
  await withServer(['--mode', 'read-only'], async (client, server) => {
    const result = await escalate(client, file);
    assert.equal(result.isError, false, text(result));
    assert.equal(readIfExists(file), 'granted\n');
    assert.equal(result.structuredContent.sandbox.mode, 'workspace-write');
    assert.equal(server.elicitations.length, 1);
    const { message, requestedSchema } = server.elicitations[0];
    assert.ok(message.includes(`echo granted > ${file}`), message);
    assert.ok(message.includes('"workspace-write"'), message);
    assert.ok(message.includes('"read-only"'), message);
    assert.ok(message.includes('the test writes one file in the workspace'), message);
    assert.equal(requestedSchema.type, 'object');
    // Nothing is remembered: the next call runs under read-only again.
    const next = await call(client, 'bash', { command: `echo again > ${file}` });
    assert.equal(next.isError, true);
    assert.equal(next.structuredContent.kind, 'denied');
    assert.equal(readIfExists(file), 'granted\n');
  }, { answer: 'accept' });
  fs.rmSync(file);
});

test('additional_write grants one extra root for one call, and the elicitation names exactly it', async () => {
  const extra = path.join(outside, 'extra');
  fs.mkdirSync(extra, { recursive: true });
  const granted = path.join(extra, 'granted.txt');
  const again = path.join(extra, 'again.txt');
  await withServer(['--mode', 'workspace-write'], async (client, server) => {
    const result = await call(client, 'bash', { command: `echo granted > ${granted}`,
      additional_write: [extra], justification: 'the test writes one file outside the workspace' });
    assert.equal(result.isError, false, text(result));
    assert.equal(readIfExists(granted), 'granted\n');
    assert.deepEqual(result.structuredContent.denials, []);
    assert.equal(server.elicitations.length, 1);
    const { message } = server.elicitations[0];
    assert.ok(message.includes(`Also writable, for this call only:\n    ${fs.realpathSync(extra)}`), message);
    assert.ok(!message.includes('Also reachable'), message);
    assert.ok(message.includes('"workspace-write"'), message);
    // Nothing is remembered: the next call without it is denied, with the record naming its grant.
    const next = await call(client, 'bash', { command: `echo again > ${again}` });
    assert.equal(next.isError, true);
    assert.equal(next.structuredContent.kind, 'denied');
    assert.equal(fs.existsSync(again), false);
    const record = next.structuredContent.denials.find((denial) => denial.path === again);
    assert.ok(record, JSON.stringify(next.structuredContent.denials));
    assert.deepEqual(record.grant, { kind: 'writable-root', target: fs.realpathSync(extra) });
    assert.equal(server.elicitations.length, 1);
    // Declined: nothing runs.
  }, { answer: 'accept' });
  await withServer(['--mode', 'workspace-write'], async (client, server) => {
    const result = await call(client, 'bash', { command: `echo no > ${again}`, additional_write: [extra],
      justification: 'the test asks again' });
    assert.equal(result.structuredContent.kind, 'rejected');
    assert.equal(server.elicitations.length, 1);
    assert.equal(fs.existsSync(again), false);
  }, { answer: 'decline' });
  fs.rmSync(extra, { recursive: true });
});

for (const answer of ['decline', 'cancel']) {
  test(`an escalation the user answers with ${answer} is rejected, and nothing runs`, async () => {
    const file = path.join(workspace, `${answer}d.txt`);
    await withServer(['--mode', 'read-only'], async (client, server) => {
      const result = await escalate(client, file);
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent.kind, 'rejected');
      assert.ok(text(result).includes('the user rejected escalating this command to "workspace-write"'), text(result));
      assert.equal(server.elicitations.length, 1);
    }, { answer });
    assert.equal(fs.existsSync(file), false);
  });
}

test('the approval shows the command as it runs: hidden characters by number, later lines indented', async () => {
  await withServer(['--mode', 'read-only'], async (client, server) => {
    // U+202E (right-to-left override) would show "echo safe" reversed; ESC could redraw the client.
    const command = 'echo \u202eefas\x1b[2K\u061cx\necho two';
    const result = await call(client, 'bash', { command, sandbox_permissions: 'workspace-write',
      justification: 'the test checks what the user is shown' });
    assert.equal(result.structuredContent.kind, 'rejected');
    const { message } = server.elicitations[0];
    assert.ok(message.includes('echo \\u202eefas\\x1b[2K\\u061cx\n    echo two'), message);
    assert.ok(!message.includes('\u202e') && !message.includes('\x1b') && !message.includes('\u061c'), message);
  }, { answer: 'decline' });
});

test('the approval shows every hidden character class by number, in the justification too', async () => {
  await withServer(['--mode', 'read-only'], async (client, server) => {
    // C1 CSI, RLM, the line separator, an isolate, a carriage return and DEL: each could make the
    // user read something other than what runs.
    const command = 'echo a\u009bb\u200fc\u2028d\u2066e\rf\x7fg';
    const result = await call(client, 'bash', { command, sandbox_permissions: 'workspace-write',
      justification: 'safe\u202e\u2029' });
    assert.equal(result.structuredContent.kind, 'rejected');
    const { message } = server.elicitations[0];
    assert.ok(message.includes('echo a\\u009bb\\u200fc\\u2028d\\u2066e\\x0df\\x7fg'), message);
    assert.ok(message.includes('Justification: safe\\u202e\\u2029'), message);
    for (const hidden of ['\u009b', '\u200f', '\u2028', '\u2066', '\r', '\x7f', '\u202e', '\u2029'])
      assert.ok(!message.includes(hidden), JSON.stringify(hidden));
  }, { answer: 'decline' });
});

test('a client without elicitation gets the escalation refused with a clear message', async () => {
  const file = path.join(workspace, 'unasked.txt');
  await withServer(['--mode', 'read-only'], async (client) => {
    const result = await escalate(client, file);
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent.kind, 'rejected');
    assert.match(text(result), /did not declare the elicitation capability/);
    // An invalid escalation is the library's refusal, as a tool error.
    const invalid = await call(client, 'bash', { command: 'true', sandbox_permissions: 'workspace-write' });
    assert.equal(invalid.isError, true);
    assert.match(text(invalid), /invalid escalation: sandbox_permissions requires a justification/);
  });
  assert.equal(fs.existsSync(file), false);
});

// -------------------------------------------------------------------- progress, cancellation --

test('a long command with a progressToken reports progress', async () => {
  await withServer(['--mode', 'read-only'], async (client) => {
    const progress = [];
    const result = await client.callTool({ name: 'bash', arguments: { command: 'echo start; sleep 1; echo end' } },
      undefined, { onprogress: (notification) => progress.push(notification) });
    assert.equal(result.isError, false, text(result));
    assert.ok(progress.length >= 1, 'no progress notification');
    assert.equal(typeof progress[0].progress, 'number');
    assert.match(progress[0].message, /bytes of output/);
    for (let i = 1; i < progress.length; i++)
      assert.ok(progress[i].progress > progress[i - 1].progress);
  });
});

// The pids of the processes whose argv is exactly `command` split at spaces (host /proc: the
// sandbox's too).
function processesWith(command) {
  const argv = `${command.split(' ').join('\0')}\0`;
  return fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') === argv;
    } catch {
      return false;
    }
  });
}

function alive(pid) {
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch {
    return false;
  }
}

// Waits until `condition()` holds (a bound for a hung test, not a timing assertion).
async function eventually(condition, what) {
  for (let i = 0; i < 600; i++) {
    if (condition())
      return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`still waiting for: ${what}`);
}

for (const backend of ['auto', 'landlock']) {
  test(`a cancelled command ends, its processes gone (backend ${backend})`, async () => {
    await withServer(['--mode', 'workspace-write', '--backend', backend], async (client, server) => {
      // Two sleepers: one the command waits for, one it left in the background.
      const marker = `sleep 1000.${Date.now()}${Math.floor(Math.random() * 1e6)}`;
      const controller = new AbortController();
      const running = client.callTool({ name: 'bash', arguments: { command: `(${marker} &); ${marker}` } },
        undefined, { signal: controller.signal, timeout: 600000 });
      await eventually(() => processesWith(marker).length === 2, 'both sleepers to start');
      const pids = processesWith(marker);
      controller.abort('the test cancels');
      await assert.rejects(running);
      await eventually(() => pids.every((pid) => !alive(pid)), 'the cancelled command to end');
      // The server goes on serving, and sends no answer to the cancelled request.
      const next = await call(client, 'bash', { command: 'echo still here' });
      assert.equal(text(next).startsWith('still here'), true);
      assert.deepEqual(server.errors.map(String), []);
    });
  });
}

// How `child` ended; one still running after a generous bound is killed (SIGKILL), so that a
// server that does not end fails its case instead of holding up the whole run.
function ending(child) {
  return new Promise((resolve) => {
    const bound = setTimeout(() => child.kill('SIGKILL'), 30000);
    child.on('close', (status, signal) => {
      clearTimeout(bound);
      resolve({ status, signal });
    });
  });
}

// The server started by hand, a long command sent to it; `end(child)` then ends it some way.
async function endWhileRunning(backend, end) {
  const child = spawn(program, ['mcp', '--mode', 'workspace-write', '--backend', backend],
    { env: environment, cwd: workspace, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = ending(child);
  const marker = `sleep 1000.${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  child.stdout.resume();
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
    params: { name: 'bash', arguments: { command: `(${marker} &); ${marker}` } } })}\n`);
  let pids = [];
  try {
    await eventually(() => processesWith(marker).length === 2, 'both sleepers to start');
    pids = processesWith(marker);
    end(child);
    const how = await exited;
    await eventually(() => pids.every((pid) => !alive(pid)), 'the running command to end with the server');
    return how;
  } finally {
    // A failed case leaves nothing behind for the next.
    for (const pid of [child.pid, ...pids].filter(alive))
      process.kill(Number(pid), 'SIGKILL');
  }
}

for (const backend of ['auto', 'landlock']) {
  test(`the end of input kills a running command: nothing outlives the server (backend ${backend})`, { timeout: 60000 }, async () => {
    const how = await endWhileRunning(backend, (child) => child.stdin.end());
    assert.equal(how.status, 0);
  });
}

test('SIGTERM kills a running command, and the server ends by SIGTERM', { timeout: 60000 }, async () => {
  const how = await endWhileRunning('landlock', (child) => child.kill('SIGTERM'));
  assert.equal(how.signal, 'SIGTERM');
});

test('SIGTERM while an elicitation waits for the user ends the server', { timeout: 60000 }, async () => {
  const child = spawn(program, ['mcp', '--mode', 'read-only'], { env: environment, cwd: workspace,
    stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = ending(child);
  const lines = readline.createInterface({ input: child.stdout });
  const lineWhere = (predicate) => new Promise((resolve) => lines.on('line', (line) => {
    if (predicate(JSON.parse(line)))
      resolve();
  }));
  const initialized = lineWhere((message) => message.id === 1);
  const asked = lineWhere((message) => message.method === 'elicitation/create');
  const send = (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  try {
    // As a client must, the call waits for initialize's answer (requests run concurrently).
    send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18',
      capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } } });
    await initialized;
    send({ id: 2, method: 'tools/call', params: { name: 'bash', arguments: { command: 'true',
      sandbox_permissions: 'workspace-write', justification: 'the test never answers' } } });
    await asked;
    child.kill('SIGTERM');
    assert.equal((await exited).signal, 'SIGTERM');
  } finally {
    if (alive(child.pid))
      child.kill('SIGKILL');
  }
});

// --------------------------------------------------------------------------------- sessions --

test('with --session, each call resolves the session again: a mode set from the CLI counts next call', async () => {
  const dsh = (...args) => execFileSync(program, args, { env: environment, cwd: workspace, encoding: 'utf8' }).trim();
  const id = dsh('session', 'new', '--cwd', workspace);
  dsh('session', 'mode', id, 'read-only');
  const file = path.join(workspace, 'session.txt');
  await withServer(['--session', id], async (client) => {
    let result = await call(client, 'write_file', { path: 'session.txt', content: 'one' });
    assert.equal(result.isError, true);
    assert.ok(text(result).startsWith(fileDenial('session.txt', 'read-only')), text(result));
    assert.equal(fs.existsSync(file), false);

    dsh('session', 'mode', id, 'workspace-write');
    result = await call(client, 'write_file', { path: 'session.txt', content: 'two' });
    assert.equal(result.isError, false, text(result));
    assert.equal(readIfExists(file), 'two');
  });
  fs.rmSync(file);
});

test('denials come back typed in structuredContent, read aloud for the model, and kept in the session', async () => {
  const dsh = (...args) => execFileSync(program, args, { env: environment, cwd: workspace, encoding: 'utf8' }).trim();
  const id = dsh('session', 'new', '--cwd', workspace);
  dsh('session', 'mode', id, 'workspace-write');
  const real = fs.realpathSync(outside);
  const byFile = path.join(real, 'denied-by-file-tool.txt');
  const byBash = path.join(real, 'denied-by-bash.txt');
  await withServer(['--session', id], async (client) => {
    let result = await call(client, 'write_file', { path: byFile, content: 'x' });
    assert.equal(result.isError, true, text(result));
    assert.equal(result.structuredContent.code, 'FS_SANDBOX_DENIED');
    const denial = result.structuredContent.denial;
    assert.deepEqual([denial.op, denial.path, denial.rule, denial.source], ['write', byFile, 'outside-roots', 'file-guard']);
    assert.deepEqual(denial.grant, { kind: 'writable-root', target: real });
    assert.ok(text(result).includes(`\ndenied: write "${byFile}" (outside-roots)`), text(result));

    result = await call(client, 'bash', { command: `echo x > ${byBash}` });
    assert.equal(result.structuredContent.kind, 'denied', text(result));
    const records = result.structuredContent.denials.filter((record) => record.path === byBash);
    assert.equal(records.length, 1, JSON.stringify(result.structuredContent.denials));
    assert.deepEqual([records[0].rule, records[0].source], ['outside-roots', 'supervisor']);
    // The short block for the model: a second text content, one line per denial.
    assert.equal(result.content.length, 2, JSON.stringify(result.content));
    assert.match(result.content[1].text, /^denied: write ".*denied-by-bash\.txt" \(outside-roots\): /);
  });
  assert.equal(fs.existsSync(byFile), false);
  assert.equal(fs.existsSync(byBash), false);
  const kept = JSON.parse(dsh('session', 'denials', id, '--json')).denials;
  assert.deepEqual(kept.filter((record) => [byFile, byBash].includes(record.path)).map((record) => [record.path, record.surface]),
    [[byFile, 'fs'], [byBash, 'bash']]);
});

test('a policy that cannot be resolved is refused at start, before anything is served', async () => {
  const start = (args) => new Promise((resolve) => {
    const child = spawn(program, ['mcp', ...args], { env: environment, cwd: workspace, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '', stdout = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end();   // no request: the refusal answers nothing, and ends with the input
  });
  const missingRoot = await start(['--mode', 'workspace-write', '--root', path.join(scratch, 'missing')]);
  assert.equal(missingRoot.status, 125, missingRoot.stderr);
  assert.match(missingRoot.stderr, /^dsh-sandbox: SANDBOX_INVALID_ROOT: /);
  const unknownSession = await start(['--session', 'no-such-session']);
  assert.equal(unknownSession.status, 125, unknownSession.stderr);
  const badMode = await start(['--mode', 'wide-open']);
  assert.equal(badMode.status, 2, badMode.stderr);
  assert.match(badMode.stderr, /unknown mode "wide-open"/);
  for (const result of [missingRoot, unknownSession, badMode])
    assert.equal(result.stdout, '');
});

test('a server that cannot serve its policy: the SDK client\'s connect rejects with the cause', async () => {
  const badConfig = path.join(scratch, 'bad-config.json');
  fs.writeFileSync(badConfig, '{"mode": "sideways"}');
  const noBwrap = { ...environment, DSH_SANDBOX_BWRAP: path.join(scratch, 'no-such-bwrap') };
  const cases = [
    [['--mode', 'workspace-write', '--root', path.join(scratch, 'missing')], environment,
      /SANDBOX_INVALID_ROOT: .*missing/],
    [['--session', 'no-such-session'], environment, /no-such-session/],
    [['--config', badConfig], environment, /mode/],
    // No backend: bwrap alone, and the bwrap named is not there.
    [['--mode', 'workspace-write', '--backend', 'bwrap'], noBwrap, /SANDBOX_UNAVAILABLE: .*no-such-bwrap/],
  ];
  for (const [args, env, cause] of cases) {
    let rejected = null;
    try {
      const server = await connect(args, { env, stderr: 'ignore' });
      await server.close();
    } catch (error) {
      rejected = error;
    }
    assert.ok(rejected, `connect succeeded for ${args.join(' ')}`);
    assert.ok(rejected instanceof McpError, String(rejected));
    assert.match(rejected.message, /dsh-sandbox mcp cannot serve: /);
    assert.match(rejected.message, cause);
    assert.doesNotMatch(rejected.message, /Connection closed/);
  }
  fs.rmSync(badConfig);
});
