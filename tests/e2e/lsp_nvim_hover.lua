-- Headless Neovim 0.7 as a real client of `claude-memory lsp` (run by tests/e2e/test_lsp_nvim.py):
--   LSP_PY=<python> LSP_OUT=<dir> MEM_CITATION=mem:XXXXXX nvim --headless --clean -c "luafile <this file>"
-- Opens <dir>/notes.md citing the memory, hovers on the citation and writes <dir>/hover.out:
-- "OK" then the hover's Markdown, or "ERROR <what went wrong>". The server inherits CLAUDE_MEMORY_HOME.
-- Neovim 0.7 has no vim.lsp.start (0.8+): start_client + buf_attach_client + request_sync.
local dir = os.getenv("LSP_OUT")
local py = os.getenv("LSP_PY") or "python3"
local citation = os.getenv("MEM_CITATION")
local result = "ERROR nothing happened"

local function finish()
  local fh = io.open(dir .. "/hover.out", "w")
  fh:write(result .. "\n")
  fh:close()
  vim.cmd("qa!")
end

local ok, err = pcall(function()
  local line = "The greeting came from [" .. citation .. "], see there."
  local fh = io.open(dir .. "/notes.md", "w")
  fh:write("# Notes\n\n" .. line .. "\n")
  fh:close()
  vim.cmd("edit " .. dir .. "/notes.md")
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = "claude-memory",
    cmd = { py, "-m", "claude_memory", "lsp" },
    root_dir = dir,
  })
  if not client_id then
    result = "ERROR the language server did not start"
    return
  end
  vim.lsp.buf_attach_client(bufnr, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  local ready = vim.wait(30000, function()
    return client.initialized or (client.server_capabilities ~= nil and next(client.server_capabilities) ~= nil)
  end, 50)
  if not ready then
    result = "ERROR the language server did not initialise"
    return
  end
  local column = string.find(line, "mem:", 1, true) + 1 -- inside the citation (0-based column of "e")
  local res = client.request_sync("textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = 2, character = column },
  }, 60000, bufnr)
  if res == nil then
    result = "ERROR no answer to the hover request"
  elseif res.err ~= nil then
    result = "ERROR " .. vim.inspect(res.err)
  elseif res.result == nil then
    result = "ERROR the hover was empty"
  else
    result = "OK\n" .. res.result.contents.value
  end
  client.stop()
  vim.wait(5000, function() return client.is_stopped() end, 50)
end)
if not ok then
  result = "ERROR " .. tostring(err)
end
finish()
