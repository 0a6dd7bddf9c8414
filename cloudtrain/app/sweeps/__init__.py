"""The sweep use case: started, driven and resumed (:mod:`.drive`), its trials run here (:mod:`.local`),
found again (:mod:`.lookup`), owned by one process at a time (:mod:`.owner`) and handed to a detached
one (:mod:`.handover`)."""
