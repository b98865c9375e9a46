from lcread.cli import main

main()
