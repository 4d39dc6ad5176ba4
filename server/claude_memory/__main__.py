from claude_memory.cli import main

main()
