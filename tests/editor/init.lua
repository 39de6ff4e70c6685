-- Neovim set-up for the npu-audit language server (Neovim 0.7 and newer): every Python buffer is
-- attached to `npu-audit lsp`, one server per project root. tests/test_editor_nvim.py starts Neovim
-- with this file alone (`nvim --clean -u tests/editor/init.lua`), so this is the tested set-up; it
-- reads the server's path from $NPU_AUDIT_EXECUTABLE (the test's virtual environment), else runs
-- `npu-audit` from PATH.

local uv = vim.uv or vim.loop -- vim.uv from Neovim 0.10 on
local npu_audit_cmd = { vim.env.NPU_AUDIT_EXECUTABLE or 'npu-audit', 'lsp' }

-- The project root: the nearest folder upwards holding one of these, else the file's own folder.
-- npu-audit reads [tool.npu-audit] from pyproject.toml and resolves imported helper modules from here.
local root_markers = { 'pyproject.toml', 'setup.cfg', 'setup.py', '.git' }

local function project_root(file)
  local start = vim.fn.fnamemodify(file, ':p:h')
  local dir = start
  while true do
    for _, marker in ipairs(root_markers) do
      if uv.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      return start
    end
    dir = parent
  end
end

local started = {} -- Neovim 0.7: project root -> client id, so a project shares one server

vim.api.nvim_create_autocmd('FileType', {
  pattern = 'python',
  callback = function(args)
    local file = vim.api.nvim_buf_get_name(args.buf)
    if file == '' then
      return
    end
    local config = { name = 'npu-audit', cmd = npu_audit_cmd, root_dir = project_root(file) }
    if vim.lsp.start then -- Neovim 0.8 and newer: starts the server or reuses the one of this root
      vim.lsp.start(config, { bufnr = args.buf })
      return
    end
    local id = started[config.root_dir]
    if id == nil or vim.lsp.get_client_by_id(id) == nil then
      id = vim.lsp.start_client(config)
      started[config.root_dir] = id
    end
    if id then
      vim.lsp.buf_attach_client(args.buf, id)
    end
  end,
})
