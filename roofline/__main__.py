from roofline.cli import main

main()
