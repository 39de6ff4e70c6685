-- One scripted editing session for tests/test_editor_nvim.py, run after tests/editor/init.lua
-- (`nvim --headless --clean -u tests/editor/init.lua -c 'luafile tests/editor/drive.lua'`).
--
-- It opens $NPU_AUDIT_TEST_SCRIPT, waits for its diagnostics, applies the NPU501 quick fix and then
-- the fix-all source action through Neovim's own workspace-edit code, writes the buffer, then edits
-- and writes the helper module $NPU_AUDIT_TEST_HELPER and waits for the script's diagnostics to
-- change. What it sees goes to $NPU_AUDIT_TEST_OUT as JSON (the test asserts on it); a wait that runs
-- out, or any other error, is recorded there as "error" and ends the session.

local uv = vim.uv or vim.loop -- vim.uv from Neovim 0.10 on
local out_path = assert(vim.env.NPU_AUDIT_TEST_OUT, 'NPU_AUDIT_TEST_OUT is not set')
local script = assert(vim.env.NPU_AUDIT_TEST_SCRIPT, 'NPU_AUDIT_TEST_SCRIPT is not set')
local helper = assert(vim.env.NPU_AUDIT_TEST_HELPER, 'NPU_AUDIT_TEST_HELPER is not set')
local helper_line = assert(vim.env.NPU_AUDIT_TEST_HELPER_LINE, 'NPU_AUDIT_TEST_HELPER_LINE is not set')
local wait_ms = tonumber(vim.env.NPU_AUDIT_TEST_WAIT_MS or '8000')
local start_ms = tonumber(vim.env.NPU_AUDIT_TEST_START_MS or '20000') -- the server's start-up

local version = vim.version()
local obs = { nvim = string.format('%d.%d.%d', version.major, version.minor, version.patch), waits = {} }

-- every publishDiagnostics the server sends, per URI, in arrival order (then Neovim's own handler)
local published = {}
local show_diagnostics = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
  if result and result.uri then
    published[result.uri] = published[result.uri] or {}
    table.insert(published[result.uri], { version = result.version, diagnostics = result.diagnostics })
  end
  return show_diagnostics(err, result, ctx, config)
end

local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients

local function wait_for(what, done, limit)
  limit = limit or wait_ms
  local t0 = uv.hrtime()
  local ok = vim.wait(limit, done, 20)
  table.insert(obs.waits, { what = what, ms = math.floor((uv.hrtime() - t0) / 1e6), ok = ok })
  if not ok then
    error(string.format('no %s within %d ms', what, limit), 0)
  end
end

local function attached_client(buf)
  if vim.lsp.get_clients then -- Neovim 0.10 and newer
    return vim.lsp.get_clients({ bufnr = buf, name = 'npu-audit' })[1]
  end
  for _, client in pairs(vim.lsp.buf_get_clients(buf)) do
    if client.name == 'npu-audit' then
      return client
    end
  end
end

local function client_of(buf)
  local found
  wait_for('npu-audit client attached to ' .. vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ':t'), function()
    found = attached_client(buf)
    return found ~= nil
  end, start_ms)
  return found
end

-- the publication for the buffer's current version (the server sends the version it analysed)
local function wait_current_diagnostics(buf, what, limit)
  local uri = vim.uri_from_bufnr(buf)
  local last
  wait_for(what, function()
    local current = vim.lsp.util.buf_versions[buf]
    for _, p in ipairs(published[uri] or {}) do
      if p.version == current then
        last = p
      end
    end
    return last ~= nil
  end, limit)
  return last.diagnostics
end

-- what Neovim shows (vim.diagnostic), 1-based lines and columns
local function shown(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(out, { code = d.code, line = d.lnum + 1, column = d.col + 1, severity = d.severity,
                        source = d.source, message = d.message })
  end
  table.sort(out, function(a, b)
    return a.line < b.line or (a.line == b.line and (a.column < b.column
      or (a.column == b.column and tostring(a.code) < tostring(b.code))))
  end)
  return out
end

local function code_actions(buf, range, context)
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, range = range, context = context }
  local replies, err = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, wait_ms)
  if replies == nil then
    error('textDocument/codeAction: ' .. tostring(err), 0)
  end
  local actions = {}
  for _, reply in pairs(replies) do
    if reply.err then
      error('textDocument/codeAction failed: ' .. vim.inspect(reply.err), 0)
    end
    for _, action in ipairs(reply.result or {}) do
      table.insert(actions, action)
    end
  end
  return actions
end

local function apply(action, client)
  if action.edit == nil then
    error('code action "' .. action.title .. '" carries no edit: ' .. vim.inspect(action), 0)
  end
  vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
end

local function buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
end

local function session()
  -- 1. open the script: diagnostics arrive for the opened version
  vim.cmd('edit ' .. vim.fn.fnameescape(script))
  local buf = vim.api.nvim_get_current_buf()
  obs.filetype = vim.bo[buf].filetype
  local client = client_of(buf)
  obs.offset_encoding = client.offset_encoding
  local raw = wait_current_diagnostics(buf, 'diagnostics of the opened script', start_ms)
  obs.opened = shown(buf)

  -- 2. the quick fix of the precision_mode finding, asked at its diagnostic as a user would
  local target
  for _, d in ipairs(raw) do
    if d.code == 'NPU501' then
      target = d
    end
  end
  if target == nil then
    error('no NPU501 diagnostic to fix; got ' .. vim.inspect(obs.opened), 0)
  end
  local actions = code_actions(buf, target.range, { diagnostics = { target } })
  obs.quickfix_titles = {}
  local quickfix
  for _, action in ipairs(actions) do
    table.insert(obs.quickfix_titles, action.title)
    if action.kind == 'quickfix' and quickfix == nil and not action.title:match('^Suppress') then
      quickfix = action
    end
  end
  if quickfix == nil then
    error('no quick fix offered at NPU501; actions: ' .. vim.inspect(obs.quickfix_titles), 0)
  end
  obs.quickfix = quickfix.title
  apply(quickfix, client)
  obs.after_quickfix_text = buffer_text(buf)
  wait_current_diagnostics(buf, 'diagnostics after the quick fix')
  obs.after_quickfix = shown(buf)

  -- 3. the fix-all source action (what a "fix all" on save would apply)
  local start = { line = 0, character = 0 }
  local fix_all = code_actions(buf, { start = start, ['end'] = start }, { diagnostics = {}, only = { 'source.fixAll' } })
  obs.fix_all_titles = {}
  for _, action in ipairs(fix_all) do
    table.insert(obs.fix_all_titles, action.title)
  end
  if #fix_all ~= 1 then
    error('expected one fix-all action, got ' .. vim.inspect(obs.fix_all_titles), 0)
  end
  obs.fix_all_kind = fix_all[1].kind
  apply(fix_all[1], client)

  -- 4. write the buffer; the diagnostics of the written text
  vim.cmd('write')
  wait_current_diagnostics(buf, 'diagnostics after the fix-all')
  obs.saved = shown(buf)
  local script_uri = vim.uri_from_bufnr(buf)

  -- 5. edit the helper module the script takes a value from, and write it: the server re-analyses the
  -- open script that imports it (didSave), whose diagnostics change
  local seen = #(published[script_uri] or {})
  local before = vim.inspect(obs.saved)
  vim.cmd('edit ' .. vim.fn.fnameescape(helper))
  local helper_buf = vim.api.nvim_get_current_buf()
  client_of(helper_buf)
  wait_current_diagnostics(helper_buf, 'diagnostics of the opened helper module')
  local name = helper_line:match('^([%w_]+)%s*=')
  local lines = vim.api.nvim_buf_get_lines(helper_buf, 0, -1, false)
  local row
  for i, line in ipairs(lines) do
    if line:match('^' .. name .. '%s*=') then
      row = i
    end
  end
  if row == nil then
    error('no line assigning ' .. name .. ' in ' .. helper, 0)
  end
  vim.api.nvim_buf_set_lines(helper_buf, row - 1, row, false, { helper_line })
  vim.cmd('write')
  obs.dependent_publications = 0
  wait_for('change of the script\'s diagnostics after writing the helper module', function()
    local list = published[script_uri] or {}
    obs.dependent_publications = #list - seen
    return #list > seen and vim.inspect(shown(buf)) ~= before
  end)
  obs.after_helper = shown(buf)
end

local ok, err = xpcall(session, debug.traceback)
if not ok then
  obs.error = tostring(err)
end
local file = assert(io.open(out_path, 'w'))
file:write(vim.fn.json_encode(obs))
file:close()

for _, client in pairs(get_clients()) do
  vim.lsp.stop_client(client.id)
end
vim.wait(3000, function()
  return #get_clients() == 0
end, 20)
vim.cmd('qa!')
