module sandbox/runner-front

go 1.19
