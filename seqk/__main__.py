from seqk.cli import main

main()
