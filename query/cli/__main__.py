from query.cli import main

main()
