from trnkb.cli import main

main()
