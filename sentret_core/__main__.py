from sentret_core.cli.entry import main

main()
