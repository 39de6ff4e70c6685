from npu_audit.cli import main

raise SystemExit(main())
