from hrsync.cli import main

raise SystemExit(main())
