from roofline.entry import main

main()
