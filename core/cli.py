def main(argv=None):
    print("cli")
    return 0
